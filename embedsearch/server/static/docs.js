// The API's interactive documentation (/docs), from files this server serves: the page's
// CSP allows no inline script, so Swagger UI starts here rather than in the HTML.
"use strict";

(() => {
  const ui = window.SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null, // the default sends the schema to validator.swagger.io
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    onComplete: () => {
      // The token the search page asked for, if any, so "Try it out" works at once.
      const token = sessionStorage.getItem("embedsearch-token");
      if (token) ui.preauthorizeApiKey("bearer", token);
    },
  });
})();
