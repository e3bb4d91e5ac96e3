// rapid-rs web pages: progressive enhancement only; every page works without this script.
"use strict";

// Running jobs: refresh their row until they end.
function watchJobs() {
  document.querySelectorAll("tr[data-job]").forEach(function (row) {
    var id = row.getAttribute("data-job");
    var tick = function () {
      fetch("/jobs/" + encodeURIComponent(id) + "/status", { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
        .then(function (job) {
          var status = row.querySelector('[data-field="status"] .status');
          status.textContent = job.status;
          status.setAttribute("data-status", job.status);
          row.querySelector('[data-field="step"]').textContent = job.step;
          row.querySelector('[data-field="rows"]').textContent = job.rows_processed;
          // Server-rendered, escaped markup of our own (errors list, download link).
          row.querySelector('[data-field="errors"]').innerHTML = job.errors_html;
          if (job.done) {
            row.removeAttribute("data-job");
            var bar = document.getElementById("job-progress");
            if (bar) { bar.value = 1; bar.max = 1; }
          } else {
            setTimeout(tick, 1000);
          }
        })
        .catch(function () { setTimeout(tick, 3000); });
    };
    tick();
  });
}

document.addEventListener("DOMContentLoaded", function () {
  watchJobs();
});
