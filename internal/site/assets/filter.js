// Filters the comparison table by GPU, model, quantization and track.
(function () {
  var selects = document.querySelectorAll('#filters select');
  function apply() {
    var want = {};
    selects.forEach(function (s) { want[s.dataset.filter] = s.value; });
    document.querySelectorAll('#results tbody tr').forEach(function (row) {
      var show = Object.keys(want).every(function (k) { return !want[k] || row.dataset[k] === want[k]; });
      row.hidden = !show;
    });
  }
  selects.forEach(function (s) { s.addEventListener('change', apply); });
})();
