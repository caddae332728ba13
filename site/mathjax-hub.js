// The widget renderer typesets widget labels with MathJax 2's MathJax.Hub.Queue, which MathJax 3
// does not have (jupyter-widgets/ipywidgets#3849): give whichever MathJax object the page holds
// (the configuration first, MathJax itself once loaded) a Hub.Queue that calls MathJax 3.
(function () {
  const hub = {Queue: (call) => window.MathJax.typesetPromise && window.MathJax.typesetPromise([call[2]])};
  let current = window.MathJax;
  const withHub = (value) => { if (value && typeof value === "object" && !value.Hub) value.Hub = hub; return value; };
  withHub(current);
  Object.defineProperty(window, "MathJax", {configurable: true, get: () => current, set: (value) => { current = withHub(value); }});
})();
