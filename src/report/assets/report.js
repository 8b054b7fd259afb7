// pgokit report: renders the JSON data of this page (element #pk-data) into
// tables and an SVG icicle chart. No network, no libraries. When done it
// writes the time to first render into <body data-render-ms> (ms since
// navigation start) and data-script-ms (this script's own time), which
// tests read back from the DOM.
(function () {
  'use strict';
  var t0 = performance.now();
  var body = document.body;
  window.addEventListener('error', function (e) { body.setAttribute('data-js-error', String(e.message)); });
  var D = JSON.parse(document.getElementById('pk-data').textContent);
  var N = D.names;
  var main = document.getElementById('pk-main');
  var zoomBench = null; // set by the icicle: zooms in and out, for #pk-bench

  // The bidirectional formatting characters (which would visually reorder
  // a name and the text after it) shown as their code points.
  function nobidi(s) {
    return String(s).replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, function (c) {
      return '\u27e8U+' + c.charCodeAt(0).toString(16).toUpperCase() + '\u27e9';
    });
  }
  function esc(s) {
    return nobidi(s).replace(/[&<>"]/g, function (c) {
      return c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;';
    });
  }
  function fmt(n) { return Number(n).toLocaleString('en-US'); }
  function pct(x) { return (100 * x).toFixed(x >= 0.001 || x === 0 ? 2 : 4) + '%'; }
  // clang's -funique-internal-linkage-names suffix: shown in tooltips only
  function short(name) { return name.replace(/\.__uniq\.\d+/g, ''); }
  function nm(i) { return i >= 0 ? N[i] : 'all samples'; }
  function bar(frac, cls, max) {
    var w = Math.max(0, Math.min(1, frac)) * (max || 120);
    return '<span class="bar' + (cls ? ' ' + cls : '') + '" style="width:' + w.toFixed(1) + 'px"></span>';
  }
  function section(id, title) {
    var s = document.createElement('section');
    s.id = id;
    s.innerHTML = '<h2>' + esc(title) + '</h2>';
    main.appendChild(s);
    var a = document.createElement('a');
    a.href = '#' + id;
    a.textContent = title;
    document.getElementById('pk-nav').appendChild(a);
    return s;
  }
  function div(parent, cls, html) {
    var d = document.createElement('div');
    if (cls) d.className = cls;
    d.innerHTML = html;
    parent.appendChild(d);
    return d;
  }

  // ---- summary ----
  var S = D.summary;
  var kind = (S.probe ? 'probe-based' : 'line-based') + (S.cs ? ', context-sensitive' : '') +
    (S.preinlined ? ', pre-inlined' : '');
  document.getElementById('pk-summary').innerHTML = esc(S.format + ' profile, ' + kind) + ' · ' +
    fmt(S.samples) + ' samples in ' + fmt(S.functions) + ' functions, ' + fmt(S.profiles) +
    (S.cs ? ' contexts' : ' profiles') + (S.binary ? ' · binary ' + esc(S.binary) : '');

  // ---- hot functions ----
  (function () {
    var F = D.functions, s = section('pk-functions', 'Hot functions');
    div(s, 'note', 'Each function folded over every instance: all its contexts and every place it was inlined. ' +
      '<b>Samples</b> are its own (body) samples wherever they ran, <b>share</b> their part of all ' + fmt(S.samples) +
      ' samples; <b>total</b> and <b>head</b> add up its top-level profiles (inlinees included). ' +
      (F.count > F.rows.length ? 'The ' + F.rows.length + ' hottest of ' + fmt(F.count) + ' are listed.' : ''));
    var input = document.createElement('input');
    input.type = 'search';
    input.placeholder = 'filter by name';
    s.appendChild(input);
    var holder = div(s, 'scroll', '');
    function draw(filter) {
      var h = ['<table id="pk-functions-table"><thead><tr><th class="n">#</th><th>function</th><th class="n">samples</th>' +
        '<th>share</th><th class="n">total</th><th class="n">head</th><th class="n">contexts</th><th class="n">inlined copies</th></tr></thead><tbody>'];
      var top = F.rows.length ? F.rows[0][1] : 0;
      for (var i = 0; i < F.rows.length; i++) {
        var r = F.rows[i], name = N[r[0]];
        if (filter && name.toLowerCase().indexOf(filter) < 0) continue;
        var share = S.samples ? r[1] / S.samples : 0;
        h.push('<tr><td class="n">' + (i + 1) + '</td><td class="fn" title="' + esc(name) + '">' + esc(short(name)) +
          '</td><td class="n">' + fmt(r[1]) + '</td><td class="n" style="text-align:left">' +
          bar(top ? r[1] / top : 0) + pct(share) + '</td><td class="n">' + (r[4] ? fmt(r[2]) : '') + '</td><td class="n">' + (r[4] ? fmt(r[3]) : '') +
          '</td><td class="n">' + fmt(r[4]) + '</td><td class="n">' + fmt(r[5]) + '</td></tr>');
      }
      h.push('</tbody></table>');
      holder.innerHTML = h.join('');
    }
    input.addEventListener('input', function () { draw(input.value.toLowerCase()); });
    draw('');
  })();

  // ---- context tree: icicle ----
  (function () {
    var T = D.tree, s = section('pk-contexts', 'Context tree');
    var n = T.parent.length;
    div(s, 'note', (S.cs ? 'Calling contexts of the context-sensitive profile, outermost caller at the top' :
      'Each top-level profile with its inlined callsites below it') +
      '; a box’s width is its share of the samples (its own and everything below it). ' +
      'Click a box to zoom into it, the top bar to zoom out. ' + fmt(T.nodes) + ' nodes' +
      (T.omitted ? ' (' + fmt(T.omitted) + ' of the lightest left out of the page)' : '') + '.');
    div(s, 'legend', '<span style="background:hsl(25,75%,62%)"></span>context (top-level profile)' +
      '<span style="background:hsl(205,60%,70%)"></span>inlined callsite' +
      '<span style="background:#d7dbe2"></span>calling frame only');
    var info = div(s, '', '');
    info.id = 'pk-icicle-info';
    info.textContent = 'Hover a box for its context and counts.';
    var wrap = div(s, '', '');
    wrap.id = 'pk-icicle-wrap';
    // children lists (CSR), heaviest first
    var cnt = new Int32Array(n + 1), kids = new Int32Array(Math.max(n - 1, 0)), i;
    for (i = 1; i < n; i++) cnt[T.parent[i] + 1]++;
    for (i = 1; i <= n; i++) cnt[i] += cnt[i - 1];
    var fill = cnt.slice(0, n);
    for (i = 1; i < n; i++) kids[fill[T.parent[i]]++] = i;
    for (i = 0; i < n; i++) {
      var part = Array.prototype.slice.call(kids.subarray(cnt[i], cnt[i + 1]));
      if (part.length > 1) {
        part.sort(function (a, b) { return T.total[b] - T.total[a]; });
        kids.set(part, cnt[i]);
      }
    }
    var depth = new Int32Array(n);
    for (i = 1; i < n; i++) depth[i] = depth[T.parent[i]] + 1;
    function label(k) { return k ? short(nm(T.name[k])) : 'all samples'; }
    function site(k) { return T.line[k] + (T.disc[k] ? '.' + T.disc[k] : ''); }
    function path(k) {
      var parts = [];
      for (; k > 0; k = T.parent[k]) parts.push({ k: k });
      parts.reverse();
      return parts.map(function (p, j) {
        var next = parts[j + 1];
        return nm(T.name[p.k]) + (next ? ':' + site(next.k) : '');
      }).join(' @ ');
    }
    function hue(k) {
      var h = 0, str = nm(T.name[k]);
      for (var c = 0; c < str.length; c++) h = (h * 31 + str.charCodeAt(c)) >>> 0;
      return h % 40;
    }
    function color(k) {
      var f = T.flags[k];
      if (!k) return '#b8bfcc';
      if (f & 2) return 'hsl(' + (190 + hue(k)) + ',60%,' + (66 + hue(k) % 10) + '%)';
      if (f & 1) return 'hsl(' + (10 + hue(k)) + ',75%,' + (58 + hue(k) % 10) + '%)';
      return '#d7dbe2';
    }
    var ROW = 18, MAXROWS = 80, zoom = 0;
    function render() {
      var W = wrap.clientWidth || 1000, out = [], rows = 0;
      var rootTotal = T.total[zoom] || 1, scale = W / rootTotal;
      // the zoomed node's ancestors as full-width bars
      var anc = [];
      for (var a = zoom; a > 0; a = T.parent[a]) anc.push(a);
      anc.push(0);
      anc.reverse();
      function box(k, x, y, w) {
        out.push('<rect data-i="' + k + '" x="' + x.toFixed(2) + '" y="' + y + '" width="' + w.toFixed(2) +
          '" height="' + (ROW - 1) + '" fill="' + color(k) + '"></rect>');
        if (w > 38) {
          var chars = Math.floor((w - 6) / 6.7), t = label(k);
          if (t.length > chars) t = t.slice(0, Math.max(chars - 1, 1)) + '…';
          out.push('<text x="' + (x + 3).toFixed(2) + '" y="' + (y + 13) + '">' + esc(t) + '</text>');
        }
      }
      for (var r = 0; r < anc.length - 1; r++) box(anc[r], 0, r * ROW, W);
      var base = anc.length - 1;
      // depth-first, dropping boxes under half a pixel (and all below them)
      var stack = [zoom], xs = [0];
      while (stack.length) {
        var k = stack.pop(), x = xs.pop(), w = T.total[k] * scale, row = base + depth[k] - depth[zoom];
        if (row - base >= MAXROWS) continue;
        box(k, x, row * ROW, w);
        if (row + 1 > rows) rows = row + 1;
        var cx = x, end = cnt[k + 1];
        var ch = [];
        for (var c = cnt[k]; c < end; c++) {
          var cw = T.total[kids[c]] * scale;
          if (cw < 0.5) break; // heaviest first: the rest are smaller
          ch.push(kids[c], cx);
          cx += cw;
        }
        for (var q = ch.length - 2; q >= 0; q -= 2) { stack.push(ch[q]); xs.push(ch[q + 1]); }
      }
      var H = Math.max(rows, 1) * ROW;
      wrap.innerHTML = '<svg id="pk-icicle" xmlns="http://www.w3.org/2000/svg" width="' + W + '" height="' + H +
        '" viewBox="0 0 ' + W + ' ' + H + '">' + out.join('') + '</svg>';
      wrap.setAttribute('data-boxes', String(out.length));
    }
    wrap.addEventListener('click', function (e) {
      var k = e.target && e.target.getAttribute && e.target.getAttribute('data-i');
      if (k === null || k === undefined) return;
      k = +k;
      zoom = k === zoom ? T.parent[k] > 0 ? T.parent[k] : 0 : k;
      render();
    });
    wrap.addEventListener('mousemove', function (e) {
      var k = e.target && e.target.getAttribute && e.target.getAttribute('data-i');
      if (k === null || k === undefined) return;
      k = +k;
      var f = T.flags[k], what = [];
      if (f & 1) what.push('context profile');
      if (f & 2) what.push('inlined callsite');
      if (f & 4) what.push('pre-inliner: inline');
      if (f & 8) what.push('inlined in the binary');
      info.textContent = (k ? nobidi(path(k)) : 'all samples') + ' — ' + fmt(T.total[k]) + ' samples (' +
        pct(T.total[0] ? T.total[k] / T.total[0] : 0) + '), own ' + fmt(T.self[k]) +
        (what.length ? ' · ' + what.join(', ') : '');
    });
    if (n > 1) render(); else div(s, 'note', 'The profile has no samples.');
    zoomBench = function () {
      var c = cnt[0] < cnt[1] ? kids[cnt[0]] : 0; // the heaviest top-level node
      var d = c;
      while (cnt[d] < cnt[d + 1]) d = kids[cnt[d]]; // its heaviest leaf
      // each followed by a forced layout, as a click would get before paint
      zoom = c; render(); void wrap.firstChild.getBoundingClientRect();
      zoom = d; render(); void wrap.firstChild.getBoundingClientRect();
      zoom = 0; render(); void wrap.firstChild.getBoundingClientRect();
    };
    window.addEventListener('resize', function () { if (n > 1) render(); });
  })();

  // ---- pre-inliner decisions ----
  (function () {
    var P = D.decisions, s = section('pk-decisions', 'Pre-inliner decisions');
    if (P.mode === 'none') {
      div(s, 'note', 'This profile carries no pre-inliner decisions (no ContextShouldBeInlined attribute): ' +
        (S.cs ? 'a flat context profile written without the pre-inliner (profgen --no-preinline).' :
          'its inlined callsites, if any, are the inlining of the profiled binary.'));
      return;
    }
    div(s, 'note', (P.mode === 'nested' ?
      'Read from the nested profile: a callsite kept under its caller and marked ShouldBeInlined was chosen for ' +
      'inlining; every context not chosen was merged into its function’s base profile (listed below the table).' :
      'Read from the flat context profile: a context marked ContextShouldBeInlined was chosen for inlining into ' +
      'its caller; one without the mark was not (the compiler merges it into the function’s base profile).') +
      (P.sizes ? ' Size: the bytes of that context’s code in the profiled binary, the size the pre-inliner weighs.' :
        P.size_note ? ' (Code sizes unavailable: ' + esc(P.size_note) + ')' : ''));
    if (P.mode === 'nested') {
      div(s, '', '<p><span class="big">' + fmt(P.inlined) + '</span> contexts inlined (' + fmt(P.inlined_samples) +
        ' samples); what was not inlined is in the <span class="big">' + fmt(P.base_profiles) +
        '</span> base profiles (' + fmt(P.base_samples) + ' samples of their own).</p>');
    } else {
      div(s, '', '<p><span class="big">' + fmt(P.inlined) + '</span> contexts inlined (' + fmt(P.inlined_samples) +
        ' samples), <span class="big">' + fmt(P.not_inlined) + '</span> not inlined (' + fmt(P.not_inlined_samples) +
        ' samples).</p>');
    }
    var h = ['<table id="pk-decisions-table"><thead><tr><th>context</th><th class="n">samples</th><th>decision</th>' +
      '<th>inlined in the binary</th>' + (P.sizes ? '<th class="n">size (bytes)</th>' : '') + '</tr></thead><tbody>'];
    P.rows.forEach(function (r) {
      h.push('<tr><td class="fn" title="' + esc(r.context) + '">' + esc(short(r.context)) +
        '</td><td class="n">' + fmt(r.samples) + '</td><td>' +
        (r.inlined ? '<span class="tag yes">inlined</span>' : '<span class="tag no">not inlined</span>') +
        '</td><td>' + (r.binary_inlined ? 'yes' : 'no') + '</td>' +
        (P.sizes ? '<td class="n">' + (r.size === undefined ? '' : fmt(r.size)) + '</td>' : '') + '</tr>');
    });
    h.push('</tbody></table>');
    div(s, 'scroll', h.join(''));
    if (P.bases.length) {
      var b = ['<h3>Base profiles</h3><table><thead><tr><th>function</th><th class="n">own samples</th>' +
        '<th class="n">with inlinees</th></tr></thead><tbody>'];
      P.bases.forEach(function (r) {
        b.push('<tr><td class="fn" title="' + esc(N[r[0]]) + '">' + esc(short(N[r[0]])) + '</td><td class="n">' + fmt(r[1]) +
          '</td><td class="n">' + fmt(r[2]) + '</td></tr>');
      });
      b.push('</tbody></table>');
      div(s, 'scroll', b.join(''));
    }
  })();

  // ---- block overlap ----
  (function () {
    var O = D.overlap, s = section('pk-overlap', 'Block overlap');
    if (!O) {
      div(s, 'note', 'No reference given: pass --exact COUNTS (with --binary) or --compare PROFILE to measure it.');
      return;
    }
    div(s, 'note', 'The CSSPGO paper’s block-overlap degree against ' + esc(O.reference) + ': per function, both ' +
      'profiles’ location counts are normalized to sum 1 and the overlap is Σ min; the program’s figure weighs ' +
      'each function by its share of the reference. 1.0 = the same distribution.');
    div(s, '', '<p><span class="big" id="pk-overlap-value">' + O.overlap.toFixed(4) + '</span> program block overlap · ' +
      fmt(O.common_functions) + ' of ' + fmt(O.reference_functions) + ' reference functions profiled, covering ' +
      pct(O.reference_weight_covered) + ' of the reference.</p>');
    var h = ['<table id="pk-overlap-table"><thead><tr><th>function</th><th>overlap</th><th class="n">weight</th>' +
      '<th class="n">reference samples</th><th class="n">profile samples</th></tr></thead><tbody>'];
    O.rows.forEach(function (r) {
      h.push('<tr><td class="fn" title="' + esc(r[0]) + '">' + esc(short(r[0])) + '</td><td>' +
        bar(r[1], r[4] ? 'ov' : 'miss', 100) + (r[4] ? r[1].toFixed(4) : 'not in the profile') + '</td><td class="n">' +
        pct(r[2]) + '</td><td class="n">' + fmt(r[3]) + '</td><td class="n">' + fmt(r[4]) + '</td></tr>');
    });
    h.push('</tbody></table>');
    div(s, 'scroll', h.join(''));
  })();

  // ---- source ----
  (function () {
    var R = D.sources, s = section('pk-source', 'Source');
    if (R.note) div(s, 'note', esc(R.note));
    if (!R.files.length) return;
    div(s, 'note', 'The hottest functions’ lines with their counts (a line’s largest count over its ' +
      (S.probe ? 'probes' : 'discriminators') + '); darker = hotter.');
    R.files.forEach(function (f, fi) {
      var d = document.createElement('details');
      if (fi === 0) d.open = true;
      var funcs = f.functions.map(function (x) { return short(N[x[0]]) + ' (line ' + x[1] + ')'; }).join(', ');
      var h = ['<summary>' + esc(f.path) + ' — ' + esc(funcs) + '</summary>'];
      if (!f.found) {
        h.push('<p class="note">Source not shown: ' + esc(f.why || 'not found on this machine') + '.</p>');
      } else {
        var max = 0;
        f.blocks.forEach(function (b) { b.count.forEach(function (c) { if (c > max) max = c; }); });
        h.push('<table class="src">');
        f.blocks.forEach(function (b, bi) {
          if (bi) h.push('<tr class="gap"><td></td><td></td><td>⋯</td></tr>');
          for (var i = 0; i < b.text.length; i++) {
            var c = b.count[i], heat = c > 0 && max > 0 ? Math.log(1 + c) / Math.log(1 + max) : 0;
            var bg = c >= 0 ? ' style="background:hsla(20,90%,55%,' + (0.06 + 0.6 * heat).toFixed(3) + ')"' : '';
            h.push('<tr><td class="ln">' + (b.first + i) + '</td><td class="ct"' + bg + '>' + (c >= 0 ? fmt(c) : '') +
              '</td><td>' + esc(b.text[i]) + '</td></tr>');
          }
        });
        h.push('</table>');
      }
      d.innerHTML = h.join('');
      s.appendChild(d);
    });
  })();

  // laid-out sizes of the charts and tables (forces layout, so the time
  // below includes it), for tests reading the DOM back
  var sizes = {};
  ['pk-icicle', 'pk-functions-table', 'pk-decisions-table', 'pk-overlap-table'].forEach(function (id) {
    var e = document.getElementById(id);
    if (e) { var b = e.getBoundingClientRect(); sizes[id] = [Math.round(b.width), Math.round(b.height)]; }
  });
  var src = document.querySelector('table.src');
  if (src) { var sb = src.getBoundingClientRect(); sizes.source = [Math.round(sb.width), Math.round(sb.height)]; }
  body.setAttribute('data-sizes', JSON.stringify(sizes));
  var t1 = performance.now();
  body.setAttribute('data-script-ms', (t1 - t0).toFixed(1));
  body.setAttribute('data-render-ms', t1.toFixed(1));
  body.setAttribute('data-rendered', '1');
  // page.html#pk-bench: three zooms of the icicle (in, to a leaf, out),
  // timed, after the first render: how responsive a click is
  if (location.hash === '#pk-bench' && zoomBench) {
    var z0 = performance.now();
    zoomBench();
    body.setAttribute('data-zoom-ms', ((performance.now() - z0) / 3).toFixed(1));
  }
})();
