// The course site's search order (site/conf.py's html_search_scorer, via scripts/site_reading.py):
// a lesson first, then the teachers' page and the landing page, and the API reference last, so
// that "Jacobian" finds notebook 03 before utils.jacobians. Within each group Sphinx's own
// score decides. Each result is [docname, title, anchor, descr, score, filename, kind].
var Scorer = {
  score: (result) => {
    const [docname, , , , score] = result;
    const group = docname.startsWith("notebooks/") ? 2000 : docname === "api" || docname === "genindex" ? 0 : 1000;
    return group + score;
  },
  // Sphinx's defaults (searchtools.js), which it uses only when no Scorer is defined.
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {0: 15, 1: 5, 2: -5},
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
