// What the results site's index and in-browser comparison share (written by `ssdpts site`, after site-data.js).
window.SSDPTS_KIT = (function (site) {
  "use strict";
  function shellWord(s) { return /^[\w@%+=:,.\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'"; }
  return {
    // the comparison `ssdpts compare` wrote for exactly these runs (any order), or null
    fullComparison: function (ids) {
      var key = ids.slice().sort().join(","), found = null;
      site.comparisons.forEach(function (c) { if (c.runs.slice().sort().join(",") === key) found = c; });
      return found;
    },
    // the command that writes the full comparison of these runs
    compareCommand: function (ids) {
      return "ssdpts compare " + ids.join(" ") + " --results " + shellWord(site.results) + " --out DIR";
    }
  };
})(window.SSDPTS_SITE);
