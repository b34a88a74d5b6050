// Swagger UI for a worker: loads /openapi.json with the bearer token kept in this tab's session
// storage and pre-authorizes Swagger with it (the Authorize button shows and changes it).
(function () {
  "use strict";
  var KEY = "streams-runtime-token";
  var note = document.getElementById("token-note");
  var input = document.getElementById("token-input");
  function token() { return sessionStorage.getItem(KEY) || ""; }
  function start() {
    var headers = token() ? { Authorization: "Bearer " + token() } : {};
    fetch("/openapi.json", { headers: headers }).then(function (r) {
      if (r.status === 401) {
        note.textContent = token() ? "the token was refused (401): enter the worker's token"
          : "this worker needs its bearer token: enter it above";
        input.focus();
        return null;
      }
      return r.json();
    }).then(function (spec) {
      if (!spec) return;
      note.textContent = "";
      var ui = SwaggerUIBundle({
        spec: spec,
        dom_id: "#swagger-ui",
        deepLinking: true,
        onComplete: function () { if (token()) ui.preauthorizeApiKey("bearerAuth", token()); },
      });
      window.streamsSwagger = ui;
    }).catch(function (e) { note.textContent = "cannot load /openapi.json: " + e; });
  }
  document.getElementById("token-bar").addEventListener("submit", function (ev) {
    ev.preventDefault();
    sessionStorage.setItem(KEY, input.value.trim());
    input.value = "";
    start();
  });
  start();
})();
