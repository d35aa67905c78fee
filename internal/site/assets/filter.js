// Filters the comparison table's runs by GPU, model, quantization, track
// and engine: a run's card (its rows) is shown or hidden whole.
(function () {
  var selects = document.querySelectorAll('#filters select');
  function apply() {
    var want = {};
    selects.forEach(function (s) { want[s.dataset.filter] = s.value; });
    document.querySelectorAll('#results tbody.run').forEach(function (run) {
      var show = Object.keys(want).every(function (k) { return !want[k] || run.dataset[k] === want[k]; });
      run.hidden = !show;
    });
  }
  selects.forEach(function (s) { s.addEventListener('change', apply); });
})();
