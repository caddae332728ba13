// The course site's reading aids, on every page (scripts/site_reading.py serves this file).
// Widgets render after the page loads, and a static widget changes the DOM whenever a control
// moves, so everything below is applied again after every change (a MutationObserver).
(function () {
  "use strict";
  const words = (element) => (element ? element.textContent.replace(/\s+/g, " ").trim() : "");
  const FORMULA_CHOICE = "course-formulas-in-tab-order";

  // A slider handle (noUiSlider inside ipywidgets) has no name, and it announces its index:
  // name it by its control's label and give it the value its readout shows. A static widget's
  // readout offers typing (ipywidgets), but the pictures exist only for the slider's positions:
  // there it is text, not a box to type into.
  function nameSliders() {
    for (const slider of document.querySelectorAll(".widget-slider")) {
      const handle = slider.querySelector(".noUi-handle");
      const readout = slider.querySelector(".widget-readout");
      if (!handle) continue;
      const label = words(slider.querySelector(".widget-label"));
      if (label && handle.getAttribute("aria-label") !== label) handle.setAttribute("aria-label", label);
      const value = words(readout);
      if (value && handle.getAttribute("aria-valuetext") !== value) handle.setAttribute("aria-valuetext", value);
      if (readout && readout.closest(".liveplot-static") && readout.getAttribute("contenteditable") !== "false") {
        readout.setAttribute("contenteditable", "false");
        readout.setAttribute("aria-hidden", "true");  // the handle already says the value
      }
    }
  }

  // A static widget greys out, like its live plot, the controls that change nothing at the
  // setting shown: the picture on show (its "liveplot-leaf") lists them as liveplot-greys-NAME
  // classes, and each control carries liveplot-control-NAME (utils.widgets.LivePlot.static_widget).
  function greyStaticControls() {
    for (const widget of document.querySelectorAll(".liveplot-static")) {
      const shown = Array.from(widget.querySelectorAll(".liveplot-leaf")).filter((leaf) => leaf.checkVisibility());
      if (shown.length !== 1) continue;
      const greyed = new Set(Array.from(shown[0].classList).filter((c) => c.startsWith("liveplot-greys-"))
        .map((c) => c.slice("liveplot-greys-".length)));
      for (const control of widget.querySelectorAll("[class*='liveplot-control-']")) {
        const name = Array.from(control.classList).find((c) => c.startsWith("liveplot-control-")).slice("liveplot-control-".length);
        setGreyed(control, greyed.has(name));
      }
    }
  }

  function setGreyed(control, off) {
    if (control.classList.contains("course-greyed") === off) return;
    control.classList.toggle("course-greyed", off);
    for (const input of control.querySelectorAll("button, select, input")) input.disabled = off;
    const slider = control.querySelector(".noUi-target");
    if (slider) {
      // noUiSlider ignores keys and drags while its target has the attribute "disabled".
      if (off) slider.setAttribute("disabled", "true"); else slider.removeAttribute("disabled");
      for (const handle of slider.querySelectorAll(".noUi-handle")) {
        handle.setAttribute("tabindex", off ? "-1" : "0");
        if (off) handle.setAttribute("aria-disabled", "true"); else handle.removeAttribute("aria-disabled");
      }
    }
  }

  // MathJax puts no formula in the tab order (site/conf.py loads it without its menu); a reader
  // who wants to step through formulas one by one (with a screen reader, say) ticks this box.
  function formulaChoice() {
    const article = document.querySelector("article.bd-article");
    if (!article || !article.querySelector(".math") || document.getElementById(FORMULA_CHOICE)) return;
    const box = document.createElement("p");
    box.className = "course-formula-choice d-print-none";
    box.innerHTML = `<label><input type="checkbox" id="${FORMULA_CHOICE}"> Let the Tab key stop at each formula</label>`;
    const heading = article.querySelector("h1");
    if (heading) heading.after(box); else article.prepend(box);
    const input = box.querySelector("input");
    input.checked = localStorage.getItem(FORMULA_CHOICE) === "yes";
    input.addEventListener("change", () => {
      localStorage.setItem(FORMULA_CHOICE, input.checked ? "yes" : "no");
      formulasInTabOrder();
    });
  }

  function formulasInTabOrder() {
    const wanted = localStorage.getItem(FORMULA_CHOICE) === "yes";
    for (const formula of document.querySelectorAll("mjx-container")) {
      if (wanted && formula.getAttribute("tabindex") !== "0") formula.setAttribute("tabindex", "0");
      // A formula wider than the page scrolls: it stays a tab stop, or a keyboard could not scroll it.
      // (An inline formula has no width of its own to scroll in: its clientWidth is 0.)
      const scrolls = formula.getAttribute("display") === "true" && formula.scrollWidth > formula.clientWidth + 1;
      if (!wanted && scrolls && formula.getAttribute("tabindex") !== "0") formula.setAttribute("tabindex", "0");
      if (!wanted && !scrolls && formula.hasAttribute("tabindex")) formula.removeAttribute("tabindex");
    }
  }

  // Search snippets: the article's own words only (no theme buttons, no folded answers or
  // outputs), with formulas as plain text instead of LaTeX source.
  const SYMBOLS = {alpha: "α", beta: "β", gamma: "γ", delta: "δ", epsilon: "ε", lambda: "λ", mu: "μ", sigma: "σ",
    Sigma: "Σ", sum: "Σ", prod: "Π", partial: "∂", nabla: "∇", infty: "∞", cdot: "·", times: "×", approx: "≈",
    le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠", to: "→", rightarrow: "→", pm: "±", sqrt: "√",
    lVert: "‖", rVert: "‖", Vert: "‖", prime: "′", ldots: "…", dots: "…", top: "ᵀ", triangle: "△", triangledown: "▽"};

  function plainFormula(tex) {
    return tex
      .replace(/\\[()[\]]/g, " ")
      .replace(/\\begin\{[a-z*]+\}|\\end\{[a-z*]+\}/g, " ")
      .replace(/\\\\/g, "; ")
      .replace(/&/g, " ")
      .replace(/\\frac\{([^{}]*)\}\{([^{}]*)\}/g, "($1)/($2)")
      .replace(/\\(?:mathrm|text|mathbf|operatorname|mathit|mathcal|boldsymbol)\{([^{}]*)\}/g, "$1")
      .replace(/\\(?:left|right|big|Big|bigl|bigr)\b/g, "")
      .replace(/\\[,;:! ]|\\q?quad\b/g, " ")
      .replace(/\\\|/g, "‖")
      .replace(/\\([A-Za-z]+)/g, (_, name) => SYMBOLS[name] || name)
      .replace(/[{}]/g, "")
      .replace(/\s+/g, " ")
      .trim();
  }

  function cleanSearchSnippets() {
    if (typeof Search === "undefined" || Search.courseSnippets) return;
    const original = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const page = new DOMParser().parseFromString(htmlString, "text/html");
      const article = page.querySelector("article.bd-article");
      if (article) {
        for (const part of article.querySelectorAll("details, .no-search, .d-print-none, .course-formula-choice, .widget-subarea, script, style")) {
          part.remove();
        }
        for (const formula of article.querySelectorAll(".math")) formula.textContent = ` ${plainFormula(formula.textContent)} `;
        const main = page.querySelector('[role="main"]');
        if (main) main.replaceChildren(article);
      }
      return original(page.documentElement.outerHTML, anchor);
    };
    Search.courseSnippets = true;
  }

  // myst-nb labels each fold's <summary> "Toggle hidden content", which hides the words it shows
  // ("Show code cell output"); a screen reader should hear those words, as a sighted reader reads them.
  function nameFolds() {
    for (const summary of document.querySelectorAll('summary[aria-label="Toggle hidden content"]')) {
      summary.removeAttribute("aria-label");
    }
  }

  // "Run this page" (site/course-live.js) gives each cell a code editor and live outputs: each
  // editor is named by its cell, and a live figure or live plot picture says in words what the
  // stored one said (the figure's alt text; the live plot's text under its picture).
  function nameLiveParts() {
    document.querySelectorAll("div.cell").forEach((cell, index) => {
      const editor = cell.querySelector(".thebe-input textarea");
      const name = `Code of cell ${index + 1}`;
      if (editor && editor.getAttribute("aria-label") !== name) editor.setAttribute("aria-label", name);
      const stored = cell.querySelector(".cell_output img[alt]");
      for (const image of cell.querySelectorAll(".course-live-output img:not([alt])")) {
        const plot = image.closest(".liveplot");
        const caption = plot ? words(plot.querySelector(".liveplot-caption")) : "";
        image.setAttribute("alt", caption || (stored && stored.alt) || "the figure this cell draws");
      }
    });
    for (const image of document.querySelectorAll(".course-live-output .liveplot > img.widget-image")) {
      // The live plot redraws its picture in place: its words follow the caption under it.
      const caption = words(image.closest(".liveplot").querySelector(".liveplot-caption"));
      if (caption && image.alt !== caption) image.setAttribute("alt", caption);
    }
  }

  let queued = false;
  function apply() {
    queued = false;
    nameFolds();
    nameSliders();
    nameLiveParts();
    greyStaticControls();
    formulaChoice();
    formulasInTabOrder();
  }
  function queue() {
    if (!queued) {
      queued = true;
      requestAnimationFrame(apply);
    }
  }

  function start() {
    cleanSearchSnippets();
    apply();
    new MutationObserver(queue).observe(document.body, {subtree: true, childList: true, characterData: true,
      attributes: true, attributeFilter: ["class", "style", "aria-valuetext", "aria-valuenow", "tabindex"]});
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
