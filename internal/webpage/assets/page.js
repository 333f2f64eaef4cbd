// Filters the page's items (elements with data-search) by the words typed
// in the search box, or given as ?q= or #q= in the page's address.
(function () {
  var box = document.getElementById("q");
  if (!box) return;
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-search]"));
  var count = document.getElementById("shown");
  function apply() {
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    items.forEach(function (el) {
      var text = el.getAttribute("data-search").toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; });
      el.classList.toggle("hidden", !ok);
      if (ok) shown++;
    });
    if (count) count.textContent = shown + " of " + items.length + " shown";
  }
  var q = new URLSearchParams(location.search).get("q");
  if (q === null && location.hash.indexOf("#q=") === 0) q = decodeURIComponent(location.hash.slice(3));
  if (q) box.value = q;
  box.addEventListener("input", apply);
  apply();
})();

// Large reports pack their issues' rankings, gzipped: unpack them into
// their places (each a fragment the page's template wrote).
(function () {
  var packed = document.getElementById("parts");
  if (!packed || typeof DecompressionStream === "undefined") return;
  var bin = atob(packed.getAttribute("data-gz"));
  var bytes = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  new Response(stream).text().then(function (t) {
    var parts = JSON.parse(t);
    document.querySelectorAll("[data-part]").forEach(function (el) {
      el.innerHTML = parts[+el.getAttribute("data-part")];
    });
  });
})();
