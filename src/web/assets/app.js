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
          row.querySelector('[data-field="rows"]').textContent = Number(job.rows_processed).toLocaleString("en-GB");
          // Server-rendered, escaped markup of our own (errors list, download link).
          row.querySelector('[data-field="errors"]').innerHTML = job.errors_html;
          if (job.done) {
            row.removeAttribute("data-job");
            var bar = document.getElementById("job-progress");
            // On the job's own page, the rest (Finished, problems, report and result links) is
            // rendered by the server: reload it once the job has ended.
            if (bar) { bar.value = 1; bar.max = 1; window.location.reload(); }
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

// Upload: send the file with a progress bar, then follow the job; a refusal lists every error.
function setupUpload() {
  var form = document.getElementById("upload-form");
  if (!form) return;
  var status = document.getElementById("upload-status");
  var bar = document.getElementById("upload-progress");
  var message = document.getElementById("upload-message");
  var jobLink = document.getElementById("job-link");
  var errorBox = document.getElementById("upload-errors");
  var errorRows = document.getElementById("upload-error-rows");
  var summary = document.getElementById("upload-error-summary");
  var button = document.getElementById("upload-button");
  var stage = document.getElementById("upload-stage");
  // The last upload's quarantine figures: said in the future until its job ends.
  var quarantined = null;

  function showErrors(httpStatus, errors, report, groupsHtml) {
    errorRows.textContent = "";
    // Server-rendered, escaped markup of our own: the problems by column and rule.
    document.getElementById("upload-groups").innerHTML = groupsHtml || "";
    var reportBox = document.getElementById("upload-report");
    reportBox.classList.add("hidden");
    if (report && report.rows_rejected > 0) {
      // The true total: the table below lists the first problems only.
      var listed = errors.length > 100 ? " (the first 100 problems are listed)" : "";
      summary.textContent = report.rows_rejected.toLocaleString() +
        (report.rows_rejected === 1 ? " row has" : " rows have") + " problems" + listed +
        " (status " + httpStatus + "). Nothing was stored.";
    } else {
      summary.textContent = errors.length + (errors.length === 1 ? " problem" : " problems") +
        " (status " + httpStatus + "). Nothing was stored.";
    }
    if (report && report.csv) {
      document.getElementById("report-csv").href = report.csv;
      document.getElementById("report-parquet").href = report.parquet;
      reportBox.classList.remove("hidden");
    }
    errors.forEach(function (text, i) {
      var tr = document.createElement("tr");
      var n = document.createElement("td"); n.textContent = String(i + 1);
      var t = document.createElement("td"); t.textContent = text;
      tr.appendChild(n); tr.appendChild(t); errorRows.appendChild(tr);
    });
    errorBox.classList.remove("hidden");
    errorBox.setAttribute("tabindex", "-1");
    errorBox.focus();
  }

  // Quarantine mode: how many rows are stored and kept apart, and both files.
  function showQuarantine(q) {
    var box = document.getElementById("upload-quarantine");
    box.classList.add("hidden");
    quarantined = q;
    if (!q) return;
    document.getElementById("quarantine-summary").textContent =
      q.rows_accepted.toLocaleString() + (q.rows_accepted === 1 ? " row is" : " rows are") +
      " being stored; " + q.rows_rejected.toLocaleString() +
      (q.rows_rejected === 1 ? " row was" : " rows were") + " kept apart.";
    var rejected = q.rows_rejected > 0 && q.quarantine_url;
    document.getElementById("quarantine-files").classList.toggle("hidden", !rejected);
    if (rejected) {
      document.getElementById("quarantine-csv").href = q.quarantine_url;
      document.getElementById("quarantine-report").href = q.report_url || "#";
    }
    box.classList.remove("hidden");
  }

  // Once the job has ended, the page says what happened, in the past.
  function ended(job) {
    stage.textContent = job.status === "SUCCESS" ? "Stored" : "The upload failed";
    if (!quarantined) return;
    var q = quarantined;
    document.getElementById("quarantine-summary").textContent = job.status === "SUCCESS"
      ? q.rows_accepted.toLocaleString() + (q.rows_accepted === 1 ? " row was" : " rows were") +
        " stored; " + q.rows_rejected.toLocaleString() +
        (q.rows_rejected === 1 ? " row was" : " rows were") + " kept apart."
      : "Nothing was stored: the job failed (its page says why).";
  }

  function followJob(jobId) {
    stage.textContent = "Sent: the job is storing the rows";
    var tick = function () {
      fetch("/jobs/" + encodeURIComponent(jobId) + "/status", { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (job) {
          message.textContent = "Job " + job.status + " (" + job.step + ", " + job.rows_processed + " rows)";
          if (job.done) ended(job);
          message.setAttribute("data-status", job.status);
          if (job.done) {
            button.disabled = false;
            bar.value = 100;
          } else {
            setTimeout(tick, 500);
          }
        })
        .catch(function () { setTimeout(tick, 2000); });
    };
    tick();
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var file = document.getElementById("file").files[0];
    if (!file) return;
    var dataset = document.getElementById("dataset").value;
    var version = document.getElementById("version").value;
    var params = [];
    if (version) params.push("version=" + encodeURIComponent(version));
    if (document.getElementById("quarantine").checked) params.push("on_error=quarantine");
    var url = "/datasets/" + dataset.split("/").map(encodeURIComponent).join("/") + "/upload" +
      (params.length ? "?" + params.join("&") : "");
    var body = new FormData();
    body.append("file", file, file.name);
    errorBox.classList.add("hidden");
    status.classList.remove("hidden");
    bar.value = 0;
    message.textContent = "Sending " + file.name + "…";
    stage.textContent = "Sending the file";
    message.removeAttribute("data-status");
    jobLink.textContent = "";
    showQuarantine(null);
    button.disabled = true;
    var xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("X-CSRF-Token", form.getAttribute("data-csrf"));
    xhr.upload.addEventListener("progress", function (e) {
      if (e.lengthComputable) bar.value = Math.round((e.loaded / e.total) * 100);
    });
    xhr.addEventListener("load", function () {
      var answer = {};
      try { answer = JSON.parse(xhr.responseText); } catch (e) { answer = { errors: ["The server answered " + xhr.status] }; }
      if (xhr.status === 202) {
        bar.value = 100;
        message.textContent = "Received; validating and storing…";
        var a = document.createElement("a");
        a.href = "/jobs/" + encodeURIComponent(answer.job_id);
        a.textContent = "Job " + answer.job_id;
        jobLink.appendChild(a);
        showQuarantine(answer.quarantine);
        followJob(answer.job_id);
      } else {
        button.disabled = false;
        status.classList.add("hidden");
        showErrors(xhr.status, answer.errors || ["The server answered " + xhr.status], answer.report, answer.groups_html);
      }
    });
    xhr.addEventListener("error", function () {
      button.disabled = false;
      showErrors(0, ["The connection failed while sending the file."]);
    });
    xhr.send(body);
  });
}

document.addEventListener("DOMContentLoaded", function () {
  setupUpload();
});
