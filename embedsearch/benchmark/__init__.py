"""The performance figures: `embedsearch bench` (its sections and options: `options`;
the run: `suite`), a module per section, each a table (`report`)."""
