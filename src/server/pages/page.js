// The job page, live: the log's lines and the phases as the bot streams them (Server-Sent
// Events), and the page loaded again once the job has its verdict. Text from the stream is only
// ever set as textContent, never parsed as HTML.
"use strict";
(function () {
  var section = document.getElementById("log");
  var source = section && section.getAttribute("data-stream");
  if (!source || !window.EventSource) {
    return;
  }
  var lines = document.getElementById("log-lines");
  var live = document.getElementById("log-live");
  var state = document.getElementById("state");
  var phaseList = document.getElementById("phase-list");
  var empty = document.getElementById("log-empty");
  var skew = 0;
  var current = null;

  function say(text) {
    if (live) {
      live.textContent = text;
    }
  }

  function followed() {
    return window.innerHeight + window.scrollY >= document.body.scrollHeight - 48;
  }

  function append(text, className) {
    var follow = followed();
    var row = document.createElement("span");
    row.className = className || "line";
    row.textContent = text + "\n";
    lines.appendChild(row);
    if (empty) {
      empty.remove();
      empty = null;
    }
    if (follow) {
      window.scrollTo(0, document.body.scrollHeight);
    }
  }

  function took(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    var h = Math.floor(s / 3600);
    var m = Math.floor(s / 60) % 60;
    if (h > 0) {
      return h + " h " + m + " min";
    }
    if (m > 0) {
      return m + " min " + (s % 60) + " s";
    }
    return s + " s";
  }

  function renderPhases(data) {
    if (!phaseList) {
      return;
    }
    while (phaseList.firstChild) {
      phaseList.removeChild(phaseList.firstChild);
    }
    current = null;
    data.phases.forEach(function (phase) {
      var item = document.createElement("li");
      var running = phase.ended_at_ms === null;
      item.className = running ? "current" : "done";
      item.setAttribute("data-phase", phase.phase);
      item.appendChild(document.createTextNode(phase.phase + " "));
      var time = document.createElement("span");
      time.className = "took";
      var end = running ? Date.now() - skew : phase.ended_at_ms;
      time.textContent = took(end - phase.started_at_ms);
      item.appendChild(time);
      phaseList.appendChild(item);
      if (running) {
        current = { started: phase.started_at_ms, element: time };
      }
    });
  }

  window.setInterval(function () {
    if (current) {
      current.element.textContent = took(Date.now() - skew - current.started);
    }
  }, 1000);

  var events = new EventSource(source);
  events.onopen = function () {
    say("Live: new lines appear as the worker prints them.");
  };
  events.onerror = function () {
    say("The stream was interrupted; reconnecting…");
  };
  events.addEventListener("log", function (event) {
    try {
      append(JSON.parse(event.data));
    } catch (e) {
      // A line that is not JSON is not from the bot.
    }
  });
  events.addEventListener("attempt", function (event) {
    append("— attempt " + Number(event.data) + " —", "attempt");
  });
  events.addEventListener("phases", function (event) {
    var data;
    try {
      data = JSON.parse(event.data);
    } catch (e) {
      return;
    }
    skew = Date.now() - data.now_ms;
    if (state && typeof data.headline === "string") {
      state.textContent = data.headline;
    }
    renderPhases(data);
  });
  events.addEventListener("end", function () {
    events.close();
    say("The job has ended: loading its result…");
    window.location.reload();
  });
})();
