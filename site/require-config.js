// RequireJS resolves module names, and with them the widget renderer's fonts, from the site's
// _static folder (this file's folder) on every page, whatever the page's own folder.
require.config({baseUrl: new URL(".", document.currentScript.src).href});
