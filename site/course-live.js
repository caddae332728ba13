// "Run this page": the page's code cells, run in place in a kernel of this page's own
// (scripts/site_live.py writes the control and the page's cells as JSON; README, "The course
// as a website"). thebe (site/package.json, served from _static/thebe) is loaded on the
// first click only, so a reader who never runs anything downloads none of it.
//
// - The kernel: from the Jupyter server named in _static/course-live-server.json when the
//   site is served with one (make site-live, the tests), else from Binder.
// - Each page asks for a session at a path of its own in notebooks/, so pages (and tabs)
//   never share variables, and the kernel's working folder is the notebook's.
// - The hidden setup and import cells run first; then the live plots, whose live widget
//   replaces the static one. Every cell gets an output placeholder of its own, and a cell's
//   stored output stays on show until the cell runs.
// - The learner's edits are kept in localStorage per page (a reload brings them back);
//   restarting the kernel leaves the editors alone; leaving the page with edits that
//   could not be stored asks first.
// - A kernel lost after it started (its server stopped, the network went away) is said in
//   one sentence, as a kernel that never started is: a cell's run would wait for ever.
// - Each check cell has a "hint" button beside its run button (ex.<name>.hint()).
(function () {
  "use strict";
  const configElement = document.getElementById("course-live-config");
  if (!configElement) return;
  const config = JSON.parse(configElement.textContent);
  const staticUrl = new URL(".", document.currentScript.src).href;
  window.courseLiveRequireJs = staticUrl + "require.min.js"; // scripts/site_live.py's patch of thebe reads it
  const storageKey = "course-live:" + config.page;
  const bar = document.querySelector(".course-live");
  const status = bar.querySelector(".course-live-status");
  const startButton = bar.querySelector(".course-live-start");
  const pageCells = Array.from(document.querySelectorAll("div.cell"));
  const onPage = config.cells.filter((cell) => cell.page);
  const state = {cells: [], thebe: null, notebook: null, session: null, unsaved: false, saveTimer: null, running: false,
                 lost: false, unloading: false};

  function say(text, failed) {
    status.textContent = text;
    bar.classList.toggle("course-live-failed", !!failed);
  }

  const NO_KERNEL = "No kernel could be started for this page (Binder or the local Jupyter server did not answer, "
    + "or the network is blocked), so its code cannot run here, but everything else on it still works: ";

  function fail(what = NO_KERNEL) {
    status.replaceChildren(what, link(config.colab, "open it in Colab"), " or ",
                           link(config.download, "download the notebook", true), ".");
    bar.classList.add("course-live-failed");
    startButton.disabled = false;
    startButton.hidden = false;
    startButton.textContent = "Try again";
    startButton.onclick = () => { // a fresh page: thebe has already turned this one's cells into editors
      storeEdits();
      try { window.sessionStorage.setItem(storageKey, "start"); } catch (error) { /* start by hand */ }
      window.location.reload();
    };
  }

  function link(href, text, download) {
    const a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    if (download) a.setAttribute("download", "");
    return a;
  }

  // ---- the learner's edits, kept per page --------------------------------------------------
  function savedEdits() {
    try {
      return JSON.parse(window.localStorage.getItem(storageKey) || "{}");
    } catch (error) {
      return {};
    }
  }

  function storeEdits() {
    window.clearTimeout(state.saveTimer);
    state.saveTimer = null;
    const edits = {};
    state.cells.forEach((cell, index) => {
      if (cell.editor && cell.editor.getValue() !== cell.config.source) edits[index] = cell.editor.getValue();
    });
    try {
      if (Object.keys(edits).length) window.localStorage.setItem(storageKey, JSON.stringify(edits));
      else window.localStorage.removeItem(storageKey);
      state.unsaved = false;
    } catch (error) {
      state.unsaved = Object.keys(edits).length > 0; // no storage (private mode, full): leaving would lose them
    }
    discardButton.hidden = !Object.keys(edits).length;
  }

  function editsChanged() {
    state.unsaved = true;
    window.clearTimeout(state.saveTimer);
    state.saveTimer = window.setTimeout(storeEdits, 400);
  }

  window.addEventListener("beforeunload", (event) => {
    if (state.saveTimer !== null) storeEdits();
    if (state.unsaved) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  const discardButton = button("Discard my edits", "course-live-discard", () => {
    state.cells.forEach((cell) => {
      if (cell.editor) cell.editor.setValue(cell.config.source);
      else if (cell.edited) showStatic(cell, cell.config.source);
    });
    try { window.localStorage.removeItem(storageKey); } catch (error) { /* nothing stored */ }
    state.unsaved = false;
    discardButton.hidden = true;
  });
  discardButton.hidden = true;

  function button(text, className, onClick) {
    const element = document.createElement("button");
    element.type = "button";
    element.className = className;
    element.textContent = text;
    element.addEventListener("click", onClick);
    bar.insertBefore(element, status);
    return element;
  }

  function showStatic(cell, source) {
    const pre = cell.div.querySelector(".cell_input pre");
    if (!pre) return;
    if (!cell.original) cell.original = pre.innerHTML;
    if (source === cell.config.source) pre.innerHTML = cell.original;
    else pre.textContent = source;
    cell.edited = source !== cell.config.source;
    cell.div.classList.toggle("course-live-edited", cell.edited);
  }

  // ---- the page's cells -------------------------------------------------------------------
  if (pageCells.length !== onPage.length) {
    say("This page's cells do not match its notebook, so its code cannot run here; open it in Colab or download it.", true);
    startButton.disabled = true;
    return;
  }
  let next = 0;
  config.cells.forEach((cellConfig, index) => {
    state.cells.push({config: cellConfig, index, div: cellConfig.page ? pageCells[next++] : null});
  });
  const edits = savedEdits();
  const restored = Object.keys(edits).filter((index) => state.cells[index] && state.cells[index].config.input);
  restored.forEach((index) => showStatic(state.cells[index], edits[index]));
  if (restored.length) {
    discardButton.hidden = false;
    say(`Your edits from your last visit are back in ${restored.length} cell${restored.length > 1 ? "s" : ""} (kept in this browser); `
        + "Run this page to run them.");
  }

  // Each cell: its source where thebe looks for it ([data-executable], the editor comes there),
  // and an empty output placeholder ([data-output]) of its own, both in the page's order.
  function placeholders() {
    const current = savedEdits();
    let before = null; // the next cell on the page: where a removed cell's hidden copy goes
    for (let index = state.cells.length - 1; index >= 0; index--) {
      const cell = state.cells[index];
      const source = document.createElement("pre");
      source.setAttribute("data-executable", "true");
      source.setAttribute("data-language", "python");
      cell.startSource = index in current && cell.config.input ? current[index] : cell.config.source;
      source.textContent = cell.startSource;
      const output = document.createElement("div");
      output.className = "course-live-output";
      output.setAttribute("data-output", "true");
      if (cell.div && cell.config.input) {
        cell.div.querySelector(".cell_input").replaceChildren(source);
        cell.div.append(output);
      } else {
        const hidden = document.createElement("div");
        hidden.className = "course-live-hidden";
        hidden.hidden = true;
        hidden.append(source);
        if (cell.div) {
          cell.div.prepend(hidden);
          cell.div.append(output);
        } else {
          hidden.append(output);
          if (before) before.before(hidden);
          else (state.cells.filter((c) => c.div).pop() || {div: bar}).div.after(hidden);
          before = hidden;
        }
      }
      cell.stored = cell.div ? cell.div.querySelector(".cell_output") : null;
      if (cell.div) {
        before = cell.div;
        cell.div.classList.remove("course-live-edited");
      }
    }
  }

  function loadThebe() {
    if (window.thebe && window.thebe.bootstrap) return Promise.resolve(window.thebe);
    return new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = staticUrl + "thebe/index.js";
      script.onload = () => resolve(window.thebe);
      script.onerror = () => reject(new Error("thebe did not load"));
      document.head.append(script);
      const style = document.createElement("link");
      style.rel = "stylesheet";
      style.href = staticUrl + "thebe/thebe.css";
      document.head.append(style);
    });
  }

  async function kernelSettings() {
    try {
      const reply = await fetch(staticUrl + "course-live-server.json", {cache: "no-store"});
      if (reply.ok) return await reply.json();
    } catch (error) { /* no local server: Binder */ }
    return {};
  }

  function sessionPath() {
    const random = Array.from(window.crypto.getRandomValues(new Uint8Array(6)), (b) => b.toString(16).padStart(2, "0")).join("");
    return `notebooks/${config.page.replace(/\.ipynb$/, "")}-live-${random}.ipynb`;
  }

  async function run(cell) {
    if (cell.stored) cell.stored.hidden = true; // the live output replaces the stored one
    const reply = await cell.thebe.execute(cell.editor ? cell.editor.getValue() : cell.thebe.source);
    return !(reply && reply.error);
  }

  async function runSetup() {
    for (const cell of state.cells.filter((c) => !c.config.input)) {
      if (!(await run(cell))) throw new Error("a setup cell failed");
    }
  }

  async function runAll() {
    runAllButton.disabled = true;
    try {
      for (const [position, cell] of state.cells.entries()) {
        say(`Running cell ${position + 1} of ${state.cells.length}…`);
        if (!(await run(cell))) {
          say(`Stopped at an error in cell ${position + 1} of ${state.cells.length}: read its message, fix it and run again.`);
          return false;
        }
      }
      say("Every cell ran.");
      return true;
    } finally {
      runAllButton.disabled = false;
    }
  }

  async function restart() {
    restartButton.disabled = true;
    say("Restarting the kernel (your edits stay)…");
    try {
      await state.session.kernel.restart();
      await runSetup();
      say("The kernel restarted: the setup cells ran again, your edits are as you left them.");
    } finally {
      restartButton.disabled = false;
    }
  }

  // A check cell's "hint" button: runs ex.<name>.hint() in the kernel and shows it under the check,
  // without the learner typing over the check (each press gives the next hint).
  function hintButton(box, cell, name) {
    const hint = document.createElement("button");
    hint.type = "button";
    hint.className = "thebe-button course-live-hint";
    hint.textContent = "hint";
    hint.setAttribute("aria-label", `A hint for this exercise (ex.${name}.hint())`);
    hint.addEventListener("click", () => cell.thebe.execute(`ex.${name}.hint()`));
    box.querySelector(".thebe-controls").append(hint);
  }

  // ---- a kernel lost after it started ------------------------------------------------------
  function lost() {
    if (state.lost) return;
    state.lost = true;
    runAllButton.hidden = restartButton.hidden = true;
    document.querySelectorAll(".thebe-busy").forEach((busy) => { busy.style.display = "none"; });
    document.documentElement.dataset.courseLive = "lost";
    fail("The connection to this page's kernel was lost (its Jupyter server stopped or the network went away), "
         + "so its code cannot run here now; your edits are kept in this browser, and everything else on the page still works: "
         + "Try again, ");
  }

  // The kernel's socket closed and it is trying to connect again: if its server does not answer,
  // or no longer has this kernel, the kernel is gone (its own retries take a minute to give up).
  async function checkServer(kernel) {
    const {baseUrl, token} = kernel.serverSettings;
    const url = new URL(`api/kernels/${kernel.id}`, baseUrl);
    if (token) url.searchParams.set("token", token);
    try {
      const reply = await fetch(url, {cache: "no-store"});
      if (reply.status === 404) lost();
    } catch (error) {
      lost(); // nothing answers there
    }
  }

  function watch(kernel) {
    kernel.connectionStatusChanged.connect((_, connection) => {
      if (connection === "connecting") checkServer(kernel);
      else if (connection === "disconnected" && !state.unloading) lost();
    });
    kernel.statusChanged.connect((_, status) => { if (status === "dead") lost(); });
  }
  window.addEventListener("pagehide", () => { state.unloading = true; });

  const runAllButton = button("Run all", "course-live-run-all", () => runAll());
  const restartButton = button("Restart the kernel", "course-live-restart", () => restart());
  runAllButton.hidden = restartButton.hidden = true;

  async function start() {
    if (state.running) return;
    state.running = true;
    startButton.disabled = true;
    say("Starting a kernel for this page…");
    try {
      const settings = await kernelSettings();
      const thebe = await loadThebe();
      if (!state.notebook) placeholders();
      thebe.on("status", (_, data) => {
        if (data && data.message && data.subject === "server" && !state.session) say(`Starting a kernel: ${data.message}`);
      });
      const local = !!settings.baseUrl;
      const options = {
        requestKernel: true,
        useBinder: !local,
        mathjaxUrl: "", // the page has MathJax 3; thebe would fetch MathJax 2 from a CDN
        mountStatusWidget: false, mountActivateWidget: false,
        mountRunButton: true, mountRunAllButton: false, mountRestartButton: false, mountRestartAllButton: false,
        kernelOptions: {kernelName: "python3", path: sessionPath()},
        binderOptions: {repo: config.binder.repo, ref: config.binder.ref, repoProvider: "github",
                        binderUrl: settings.binderUrl || "https://mybinder.org"},
        serverSettings: local ? {baseUrl: settings.baseUrl, wsUrl: settings.baseUrl.replace(/^http/, "ws"),
                                 token: settings.token, appendToken: true} : {},
      };
      const {notebook, session} = await thebe.bootstrap(options);
      if (!session) throw new Error("no kernel");
      state.notebook = notebook;
      state.session = session;
      watch(session.kernel);
      notebook.cells.forEach((thebeCell, index) => {
        const cell = state.cells[index];
        cell.thebe = thebeCell;
        const box = cell.config.input ? document.querySelector(`[data-thebe-id="${thebeCell.id}"]`) : null;
        cell.editor = box ? box.querySelector(".CodeMirror").CodeMirror : null;
        if (cell.editor) {
          if (cell.editor.getValue() !== cell.startSource) cell.editor.setValue(cell.startSource); // thebe trimmed it
          // A long line wraps rather than scrolls: a scrolling editor is a region no key can reach
          // (its focus goes to a hidden text area outside it), and a learner sees the whole line.
          cell.editor.setOption("lineWrapping", true);
          cell.editor.on("change", editsChanged);
          box.querySelector(".thebe-run-button").setAttribute("aria-label", `Run cell ${index + 1}`);
          const exercise = /^ex\.(\w+)\.check\(/.exec(cell.config.source.trim());
          if (exercise) hintButton(box, cell, exercise[1]);
        }
        const execute = thebeCell.execute.bind(thebeCell);
        thebeCell.execute = (source) => { // thebe's own run button comes here too
          if (state.lost) return Promise.resolve({error: "the kernel is lost"});
          if (cell.stored) cell.stored.hidden = true;
          const kernel = state.session.kernel;
          if (kernel && kernel.connectionStatus !== "connected") checkServer(kernel);
          return execute(source);
        };
      });
      say("The kernel is starting the page's setup…");
      await runSetup();
      for (const cell of state.cells.filter((c) => c.config.live)) {
        if (!(await run(cell))) { // keep the static widget if the live one cannot be drawn yet
          cell.thebe.clear();
          if (cell.stored) cell.stored.hidden = false;
        }
      }
      bar.classList.add("course-live-ready");
      startButton.hidden = true;
      runAllButton.hidden = restartButton.hidden = false;
      say("Kernel ready: edit any cell and run it (the run button or Shift-Enter). It is this page's own kernel.");
      document.documentElement.dataset.courseLive = "ready";
    } catch (error) {
      console.error("course-live:", error);
      state.running = false;
      document.documentElement.dataset.courseLive = "failed";
      fail();
    }
  }

  startButton.onclick = start;
  try {
    if (window.sessionStorage.getItem(storageKey) === "start") {
      window.sessionStorage.removeItem(storageKey);
      start();
    }
  } catch (error) { /* no session storage: start by hand */ }
  window.courseLive = {state, run, runAll, restart, start}; // for the tests and the benchmark
})();
