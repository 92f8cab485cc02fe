// c2cluster's coordinator page: the job list with the cluster's workers and
// queue (/ui/), and one job with its partitions and trace (/ui/job/{id}).
// It reads the page's JSON endpoints (/ui/api/...) and refreshes while
// something runs. Text goes into the page through textContent and
// attributes only, never as markup.
"use strict";

(function () {
  const body = document.body;
  const cfg = {
    page: body.dataset.page,
    job: body.dataset.job,
    pollMs: Math.max(100, parseInt(body.dataset.pollMs, 10) || 2000),
    traces: body.dataset.traces === "true",
  };

  // el builds an element: el("td", {class: "num", title: t}, "text", child…).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "style") Object.assign(e.style, v);
      else if (k === "on") for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function $(id) { return document.getElementById(id); }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  // setText shows msg in node (hidden when empty); problem marks an error.
  function setText(node, msg, problem) {
    if (!node) return;
    node.textContent = msg || "";
    node.classList.toggle("problem", !!problem);
    node.hidden = !msg;
  }

  async function getJSON(path) {
    let res;
    try {
      res = await fetch(path, { headers: { Accept: "application/json" }, cache: "no-store" });
    } catch (e) {
      throw new Error("coordinator unreachable (" + e.message + ")");
    }
    let data = null;
    try { data = await res.json(); } catch (e) { /* not JSON */ }
    if (!res.ok) {
      const err = new Error((data && data.error) || ("HTTP " + res.status));
      err.status = res.status;
      throw err;
    }
    return data;
  }

  function jobHref(id) { return "/ui/job/" + encodeURIComponent(id); }

  // safeHref keeps only http(s) links (the Jaeger UI's, from the server).
  function safeHref(u) { return /^https?:\/\//i.test(u || "") ? u : null; }

  // fmtDuration writes ms with about three significant digits.
  function fmtDuration(ms) {
    if (ms === undefined || ms === null || isNaN(ms)) return "";
    if (ms === 0) return "0";
    if (ms < 1) return (ms * 1000).toFixed(0) + " µs";
    if (ms < 1000) return parseFloat(ms.toFixed(ms < 10 ? 1 : 0)) + " ms";
    const s = ms / 1000;
    if (s < 60) return parseFloat(s.toFixed(s < 10 ? 2 : 1)) + " s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + " min " + Math.round(s - m * 60) + " s";
    return Math.floor(m / 60) + " h " + (m % 60) + " min";
  }

  function fmtAgo(unixMs, nowMs) {
    if (!unixMs) return "";
    return fmtDuration(Math.max(0, nowMs - unixMs)) + " ago";
  }

  function fmtTime(unixMs) {
    if (!unixMs) return "";
    return new Date(unixMs).toLocaleString();
  }

  function shortID(id) { return id && id.length > 12 ? id.slice(0, 12) + "…" : id; }

  function badge(state) { return el("span", { class: "badge " + state }, state); }

  function progress(done, total, state) {
    const pct = total > 0 ? Math.min(100, (100 * done) / total) : 0;
    const fill = el("div", { class: "fill " + state, style: { width: pct + "%" } });
    return el("div", { class: "progress", title: done + " of " + total + " partitions" }, fill);
  }

  // Refresh: one timer; schedule() polls again after the interval, stop()
  // ends it. The header says which.
  const refresh = {
    timer: null,
    failures: 0,
    schedule(fn) {
      clearTimeout(this.timer);
      const delay = cfg.pollMs * Math.min(8, Math.pow(2, this.failures));
      this.timer = setTimeout(fn, delay);
      body.dataset.refresh = "on";
    },
    stop(why) {
      clearTimeout(this.timer);
      this.timer = null;
      body.dataset.refresh = "off";
      this.say("updated " + new Date().toLocaleTimeString() + " · " + why, false);
    },
    ok() {
      this.failures = 0;
      this.say("updated " + new Date().toLocaleTimeString() + " · refreshing every " + fmtDuration(cfg.pollMs), false);
    },
    fail(err) {
      this.failures++;
      this.say("refresh failed: " + err.message + " · retrying", true);
    },
    say(msg, problem) {
      const r = $("refresh");
      if (!r) return;
      r.textContent = msg;
      r.classList.toggle("problem", problem);
    },
  };

  // ---- the jobs page ----

  function renderJobs(data) {
    const tbody = $("jobs").tBodies[0];
    clear(tbody);
    for (const j of data.jobs) {
      const traceCell = j.trace_id
        ? (safeHref(j.jaeger_url)
          ? el("a", { href: safeHref(j.jaeger_url), rel: "noreferrer", target: "_blank", class: "mono" }, shortID(j.trace_id))
          : el("span", { class: "mono small" }, shortID(j.trace_id)))
        : "";
      tbody.append(el("tr", { "data-job": j.id, "data-state": j.state },
        el("td", {}, el("a", { href: jobHref(j.id), class: "mono" }, shortID(j.id))),
        el("td", {}, badge(j.state), j.reason ? el("div", { class: "small" }, j.reason) : null),
        el("td", {}, j.shape),
        el("td", {}, j.priority),
        el("td", {}, progress(j.partitions_done, j.partitions, j.state), " ", j.partitions_done + "/" + j.partitions),
        el("td", { title: fmtTime(j.created_unix_ms) }, fmtAgo(j.created_unix_ms, data.now_unix_ms)),
        el("td", { class: "num" }, j.timings ? fmtDuration(j.timings.total_ms) : ""),
        el("td", {}, traceCell)));
    }
    setText($("jobs-message"), data.jobs.length ? "" : "No jobs yet: submit one (coordinator prove -c1 FILE).");
  }

  function renderCluster(data) {
    const wb = $("workers").tBodies[0];
    clear(wb);
    for (const w of data.workers) {
      const inflight = w.in_flight.map((f) =>
        el("div", {}, el("a", { href: jobHref(f.job), class: "mono" }, shortID(f.job)), " partition " + f.partition));
      const resident = w.resident.map((r) => el("div", { class: "small" }, r.shape + ": " + r.residency));
      wb.append(el("tr", { "data-worker": w.id },
        el("td", {}, el("span", { class: "mono" }, w.id), w.version ? el("div", { class: "small" }, w.version) : null,
          w.quarantine ? el("div", { class: "small quarantined" }, "QUARANTINED: " + w.quarantine) : null,
          w.bad_proofs ? el("div", { class: "small" }, w.bad_proofs + " bad proofs") : null),
        el("td", {}, w.host),
        el("td", {}, w.devices.map((d) => el("div", {}, d))),
        el("td", { class: "num" }, String(w.slots)),
        el("td", {}, inflight.length ? inflight : el("span", { class: "small" }, "idle")),
        el("td", {}, resident),
        el("td", { title: fmtTime(w.heartbeat_unix_ms) }, w.heartbeat_unix_ms ? fmtAgo(w.heartbeat_unix_ms, data.now_unix_ms) : "not registered")));
    }
    setText($("workers-message"), data.workers.length ? "" : "No worker is registered.");
    const qb = $("queue").tBodies[0];
    clear(qb);
    for (const q of data.queue) {
      qb.append(el("tr", {},
        el("td", {}, q.shape), el("td", {}, q.lane),
        el("td", { class: "num" }, String(q.pending)), el("td", { class: "num" }, String(q.in_flight))));
    }
    setText($("queue-message"), data.queue.length ? "" : "The queue is empty.");
  }

  async function jobsLoop() {
    const state = $("state-filter").value;
    try {
      const [jobs, cluster] = await Promise.all([
        getJSON("/ui/api/jobs?state=" + encodeURIComponent(state)),
        getJSON("/ui/api/cluster"),
      ]);
      renderJobs(jobs);
      renderCluster(cluster);
      refresh.ok();
    } catch (e) {
      setText($("jobs-message"), e.message, true);
      refresh.fail(e);
    }
    refresh.schedule(jobsLoop);
  }

  // ---- the job page ----

  const job = { trace: null, traceSpans: -1, stableReads: 0, terminalPolls: 0, selected: null, hideClient: false, last: null };

  function fact(dl, name, ...value) {
    dl.append(el("dt", {}, name), el("dd", {}, ...value));
  }

  function renderJob(d) {
    const j = d.job;
    body.dataset.jobState = j.state;
    const st = $("job-state");
    st.className = "badge " + j.state;
    st.textContent = j.state;
    const fill = $("job-progress");
    fill.className = "fill " + j.state;
    fill.style.width = (j.partitions > 0 ? (100 * j.partitions_done) / j.partitions : 0) + "%";
    $("job-progress-text").textContent = j.partitions_done + " / " + j.partitions + " partitions proved";
    const dl = $("job-facts");
    clear(dl);
    fact(dl, "shape", j.shape);
    fact(dl, "priority", j.priority);
    fact(dl, "submitted", fmtTime(j.created_unix_ms));
    fact(dl, "updated", fmtTime(j.updated_unix_ms));
    fact(dl, j.terminal ? "took" : "running for", j.timings ? fmtDuration(j.timings.total_ms) : "");
    if (j.sector) {
      fact(dl, "sector", (j.sector.miner !== undefined ? "f0" + j.sector.miner + " " : "") +
        (j.sector.number !== undefined ? "#" + j.sector.number : ""));
    }
    if (j.proof_bytes) fact(dl, "proof", j.proof_bytes + " bytes");
    if (j.trace_id) {
      const href = safeHref(j.jaeger_url);
      fact(dl, "trace", href ? el("a", { href, rel: "noreferrer", target: "_blank", class: "mono" }, j.trace_id)
        : el("span", { class: "mono" }, j.trace_id));
    }
    setText($("job-error"), j.reason ? j.state + ": " + j.reason : "", !!j.reason);
    renderTimings(j);
    renderPartitions(d, job.trace);
  }

  function renderTimings(j) {
    const box = $("timings");
    clear(box);
    const t = j.timings;
    if (!t) return;
    const rows = [
      ["queue wait", t.queue_wait_ms, "k-client"],
      ["synthesis", t.synthesis_ms, "k-cpu"],
      ["lock wait", t.lock_wait_ms, "k-lock-wait"],
      ["prove", t.prove_ms, "k-gpu"],
      ["verify", t.verify_ms, "k-verify"],
      ["assembly", t.assemble_ms, "k-coordinator"],
    ];
    const maxMs = Math.max(1, ...rows.map((r) => r[1] || 0));
    for (const [name, ms, kind] of rows) {
      box.append(el("span", {}, name),
        el("div", {}, el("div", { class: "tbar " + kind, style: { width: (100 * (ms || 0)) / maxMs + "%" } })),
        el("span", { class: "tval" }, fmtDuration(ms || 0)));
    }
    box.append(el("strong", {}, "total (wall)"), el("div", {}), el("strong", { class: "tval" }, fmtDuration(t.total_ms)));
  }

  // partitionStates merges what the API says (state, partitions done, in
  // flight as of each worker's last heartbeat) with the trace's finished
  // partition attempts.
  function partitionStates(d, trace) {
    const j = d.job;
    const inFlight = new Map(d.in_flight.map((f) => [f.partition, f]));
    const attempts = new Map(((trace && trace.partitions) || []).map((p) => [p.partition, p]));
    const notInFlight = j.partitions - inFlight.size;
    const labels = {
      done: "done", proving: "proving", retrying: "attempt failed, retrying", failed: "failed",
      "not-proved": "not proved", queued: "queued", waiting: "queued or starting", unknown: "queued or done",
    };
    const out = [];
    for (let i = 0; i < j.partitions; i++) {
      const f = inFlight.get(i), a = attempts.get(i);
      let state, who = "";
      if (j.state === "done" || j.state === "assembling") {
        state = "done"; // every partition's proof is in
      } else if (f) {
        state = "proving";
        who = f.worker;
      } else if (a && a.ok) {
        state = "done";
      } else if (a) {
        state = j.terminal ? "failed" : "retrying";
      } else if (j.terminal) {
        state = "not-proved";
      } else if (j.state === "queued") {
        state = "queued";
      } else if (j.partitions_done > 0 && j.partitions_done >= notInFlight) {
        state = "done"; // all but the ones in flight are done
      } else if (j.partitions_done === 0 || trace) {
        state = "waiting"; // finished ones would be done above
      } else {
        state = "unknown";
      }
      if (!who && a && a.worker) who = a.worker + (a.device ? " device " + a.device : "");
      let note = "";
      if (a) note = a.attempts + (a.attempts === 1 ? " attempt" : " attempts") + (a.duration_us ? ", " + fmtDuration(a.duration_us / 1000) : "");
      out.push({ index: i, state, label: labels[state], who, note });
    }
    return out;
  }

  function renderPartitions(d, trace) {
    const box = $("partitions");
    clear(box);
    for (const p of partitionStates(d, trace)) {
      box.append(el("div", { class: "part " + p.state, "data-partition": p.index, "data-state": p.state },
        el("span", { class: "idx" }, "#" + p.index), " ",
        el("span", { class: "st" }, p.label),
        p.who ? el("span", { class: "who" }, p.who) : null,
        p.note ? el("span", { class: "who" }, p.note) : null));
    }
  }

  const kinds = [
    ["coordinator", "coordinator (submit, job, publish, assemble)"],
    ["partition", "partition attempt (worker)"],
    ["cpu", "synthesize (CPU)"],
    ["lock-wait", "lock wait (interlock.wait)"],
    ["gpu", "prepare, upload, compute, epilogue"],
    ["verify", "verify"],
    ["client", "Redis and other calls"],
  ];

  function renderLegend() {
    const box = $("trace-legend");
    clear(box);
    for (const [k, label] of kinds) {
      box.append(el("span", { class: "item", "data-kind": k }, el("span", { class: "swatch k-" + k }), label));
    }
    const cb = el("input", { type: "checkbox", on: { change: (e) => { job.hideClient = e.target.checked; renderTrace(); } } });
    cb.checked = job.hideClient;
    box.append(el("label", { class: "item toggle" }, cb, "hide Redis and other calls"));
  }

  // keyAttrs are shown beside a span's name.
  const keyAttrs = [["c2.partition", "partition"], ["c2.attempt", "attempt"], ["c2.worker", "worker"], ["c2.device", "device"], ["c2.lock", "lock"]];

  function attrOf(s, key) {
    const a = s.attrs.find((x) => x.key === key);
    return a ? a.value : undefined;
  }

  function spanTitle(s) {
    const lines = [s.name + " (" + s.service + ")", "start +" + fmtDuration(s.start_us / 1000) + ", duration " + fmtDuration(s.duration_us / 1000)];
    if (s.parent_missing) lines.push("parent span still running (not in Jaeger yet)");
    for (const a of s.attrs) lines.push(a.key + " = " + a.value);
    return lines.join("\n");
  }

  function ticks(totalUs) {
    // about six round steps over the axis
    const totalMs = totalUs / 1000;
    const raw = totalMs / 6;
    const pow = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 0.001))));
    const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) || raw;
    const out = [];
    for (let t = 0; t <= totalMs + 1e-9; t += step) out.push(t);
    return out;
  }

  function renderTrace() {
    const t = job.trace;
    const box = $("waterfall");
    clear(box);
    if (!t) return;
    body.dataset.traceSpans = String(t.spans.length);
    const total = Math.max(1, t.duration_us);
    const axis = el("div", { class: "wf-axis" });
    const tk = ticks(total);
    tk.forEach((ms, i) => {
      const pct = Math.min(100, (100 * ms * 1000) / total);
      axis.append(el("span", { class: "wf-tick" + (i === 0 ? " first" : "") + (pct > 96 ? " last" : ""), style: { left: pct + "%" } }, fmtDuration(ms)));
    });
    box.append(el("div", { class: "wf-row wf-head" },
      el("div", { class: "wf-name" }, "span"), el("div", { class: "wf-service" }, "service"),
      el("div", { class: "wf-track" }, axis), el("div", { class: "wf-dur" }, "duration")));
    for (const s of t.spans) {
      if (job.hideClient && s.kind === "client") continue;
      const lock = s.kind === "lock-wait";
      const inline = keyAttrs.map(([k, label]) => (attrOf(s, k) !== undefined ? label + "=" + attrOf(s, k) : null)).filter(Boolean).join(" ");
      const track = el("div", { class: "wf-track" });
      for (const ms of tk) track.append(el("div", { class: "wf-grid", style: { left: Math.min(100, (100 * ms * 1000) / total) + "%" } }));
      track.append(el("div", {
        class: "wf-bar k-" + s.kind + (s.error ? " error" : ""),
        "data-kind": s.kind,
        style: { left: (100 * s.start_us) / total + "%", width: (100 * s.duration_us) / total + "%" },
      }));
      const row = el("div", {
        class: "wf-row" + (lock ? " lock" : "") + (s.error ? " error" : "") + (job.selected === s.span_id ? " selected" : ""),
        "data-span-id": s.span_id, "data-span-name": s.name, "data-kind": s.kind, title: spanTitle(s),
        on: { click: () => { job.selected = s.span_id; renderTrace(); } },
      },
      el("div", { class: "wf-name", style: { paddingLeft: 6 + 14 * s.depth + "px" } },
        el("span", { class: "name" }, s.name),
        lock ? el("span", { class: "tag lock" }, "lock wait") : null,
        s.error ? el("span", { class: "tag error" }, "error") : null,
        s.parent_missing ? el("span", { class: "tag pending", title: "its parent span is not in Jaeger yet (spans are exported when they end)" }, "parent running") : null,
        inline ? el("span", { class: "attrs" }, inline) : null),
      el("div", { class: "wf-service" }, s.service),
      track,
      el("div", { class: "wf-dur" }, fmtDuration(s.duration_us / 1000)));
      box.append(row);
    }
    renderDetail();
  }

  function renderDetail() {
    const box = $("span-detail");
    clear(box);
    const s = job.trace && job.trace.spans.find((x) => x.span_id === job.selected);
    if (!s) { box.hidden = true; return; }
    box.hidden = false;
    const rows = [
      ["service", s.service], ["kind", s.kind], ["start", "+" + fmtDuration(s.start_us / 1000)],
      ["duration", fmtDuration(s.duration_us / 1000)], ["span id", s.span_id], ["parent", s.parent_id || "(root)"],
    ];
    for (const a of s.attrs) rows.push([a.key, a.value]);
    for (const ev of s.events || []) {
      rows.push(["event +" + fmtDuration(ev.at_us / 1000), ev.attrs.map((a) => a.key + "=" + a.value).join(" ")]);
    }
    box.append(el("h3", {}, s.name, s.kind === "lock-wait" ? " — waiting for the device lock" : ""),
      el("table", {}, el("tbody", {}, rows.map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", { class: "mono" }, v))))));
  }

  function traceStatus(msg, problem) { setText($("trace-status"), msg, problem); }

  async function loadTrace(d) {
    const j = d.job;
    if (!cfg.traces) {
      body.dataset.trace = "unavailable";
      traceStatus("Traces are unavailable: the coordinator has no Jaeger query API configured (-jaeger-query, $C2_JAEGER_QUERY).");
      return true;
    }
    if (!j.trace_id) {
      body.dataset.trace = "none";
      traceStatus("This job has no trace id.");
      return true;
    }
    $("trace-id").textContent = j.trace_id;
    const a = $("trace-jaeger");
    const href = safeHref(j.jaeger_url);
    if (href) { a.href = href; a.hidden = false; }
    try {
      const t = await getJSON("/ui/api/traces/" + encodeURIComponent(j.trace_id));
      job.stableReads = t.spans.length === job.traceSpans ? job.stableReads + 1 : 0;
      job.traceSpans = t.spans.length;
      job.trace = t;
      const lock = t.lock_wait_us > 0 ? ", lock waits " + fmtDuration(t.lock_wait_us / 1000) : "";
      traceStatus(t.spans.length + " spans from " + t.services.join(", ") + " over " + fmtDuration(t.duration_us / 1000) + lock +
        ". Click a span for its attributes.");
      renderTrace();
      body.dataset.trace = "loaded";
    } catch (e) {
      body.dataset.trace = e.status === 404 ? "pending" : "error";
      traceStatus(e.message, e.status !== 404);
    }
    // Finished: spans arrive in batches after they end (from each process
    // on its own), so read the trace again until it is complete — a done
    // job's has a finished attempt of every partition and the assembly —
    // and has stopped growing; at most a minute or so.
    if (!j.terminal) return false;
    job.terminalPolls++;
    const t = job.trace;
    let complete = !!t && job.stableReads >= 1;
    if (complete && j.state === "done") {
      const ok = new Set(t.partitions.filter((p) => p.ok).map((p) => p.partition));
      complete = t.spans.some((s) => s.name === "assemble") && ok.size >= j.partitions;
    }
    return complete || job.terminalPolls > 30;
  }

  async function jobLoop() {
    let finished = false;
    try {
      const d = await getJSON("/ui/api/jobs/" + encodeURIComponent(cfg.job));
      job.last = d;
      renderJob(d);
      const traceDone = await loadTrace(d);
      renderPartitions(d, job.trace);
      refresh.ok();
      finished = d.job.terminal && traceDone;
    } catch (e) {
      setText($("job-error"), e.message, true);
      if (e.status === 404 || e.status === 400) {
        refresh.stop("stopped: " + e.message);
        return;
      }
      refresh.fail(e);
    }
    if (finished) {
      body.dataset.loaded = "true";
      refresh.stop("job " + job.last.job.state + ": not refreshing");
      return;
    }
    refresh.schedule(jobLoop);
  }

  if (cfg.page === "jobs") {
    $("state-filter").addEventListener("change", () => { jobsLoop(); });
    jobsLoop();
  } else if (cfg.page === "job") {
    renderLegend();
    jobLoop();
  }
})();
