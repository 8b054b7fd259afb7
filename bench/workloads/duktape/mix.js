// A JavaScript mix for Duktape (ES5.1 + what Duktape 2.7 adds): recursion,
// trees, a sieve, string building, JSON, sorting, closures and prototype
// classes. The weights and sizes come from the globals the caller defines
// first (train.js, measure.js), so the measured run is a different and
// longer mix than the training one, not the same one repeated.
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

function Node(l, r) { this.left = l; this.right = r; }
function makeTree(d) { return d === 0 ? new Node(null, null) : new Node(makeTree(d - 1), makeTree(d - 1)); }
function checkTree(t) { return t.left === null ? 1 : 1 + checkTree(t.left) + checkTree(t.right); }
function trees(maxDepth) {
    var total = 0;
    for (var d = 4; d <= maxDepth; d += 2) {
        var iters = 1 << (maxDepth - d + 4);
        for (var i = 0; i < iters; i++) total += checkTree(makeTree(d));
    }
    return total;
}

function sieve(n) {
    var flags = [], count = 0, i, k;
    for (i = 0; i <= n; i++) flags.push(true);
    for (i = 2; i <= n; i++) {
        if (!flags[i]) continue;
        count++;
        for (k = i + i; k <= n; k += i) flags[k] = false;
    }
    return count;
}

function strings(n) {
    var parts = [], s, words = 0;
    for (var i = 0; i < n; i++) parts.push('item' + i + ':' + (i * 7 % 13).toString(16));
    s = parts.join(',');
    var fields = s.split(',');
    for (var j = 0; j < fields.length; j++) {
        var f = fields[j].toUpperCase().replace(/ITEM(\d+)/, 'x$1');
        if (f.indexOf('X1') === 0) words++;
        words += f.charCodeAt(f.length - 1) & 1;
    }
    return words + s.length;
}

function json(n) {
    var objs = [];
    for (var i = 0; i < n; i++)
        objs.push({id: i, name: 'n' + i, tags: ['a', 'b', String(i % 5)], nested: {x: i / 3, y: i % 2 === 0}});
    var text = JSON.stringify(objs), back = JSON.parse(text), sum = 0;
    for (var j = 0; j < back.length; j++) sum += back[j].id + back[j].tags.length + (back[j].nested.y ? 1 : 0);
    return sum + text.length;
}

function sorting(n) {
    var a = [], seed = 12345;
    for (var i = 0; i < n; i++) { seed = (seed * 1103515245 + 12345) & 0x7fffffff; a.push(seed % 100000); }
    a.sort(function (x, y) { return x - y; });
    var objs = a.map(function (v, k) { return {k: k, v: v % 977}; });
    objs.sort(function (p, q) { return p.v - q.v || p.k - q.k; });
    return a[n >> 1] + objs[0].k;
}

function closures(n) {
    function counter() { var c = 0; return {inc: function () { c++; return c; }, get: function () { return c; }}; }
    var cs = [], total = 0;
    for (var i = 0; i < 64; i++) cs.push(counter());
    for (var j = 0; j < n; j++) total += cs[j & 63].inc();
    return total + cs[5].get();
}

function Shape(name) { this.name = name; }
Shape.prototype.area = function () { return 0; };
Shape.prototype.describe = function () { return this.name + ':' + this.area().toFixed(2); };
function Circle(r) { Shape.call(this, 'circle'); this.r = r; }
Circle.prototype = Object.create(Shape.prototype);
Circle.prototype.area = function () { return Math.PI * this.r * this.r; };
function Rect(w, h) { Shape.call(this, 'rect'); this.w = w; this.h = h; }
Rect.prototype = Object.create(Shape.prototype);
Rect.prototype.area = function () { return this.w * this.h; };
function classes(n) {
    var shapes = [], acc = 0;
    for (var i = 0; i < n; i++) shapes.push(i % 3 ? new Rect(i % 7, i % 5) : new Circle(i % 11));
    for (var j = 0; j < shapes.length; j++) acc += shapes[j].describe().length + shapes[j].area();
    return Math.floor(acc);
}

var W = WEIGHTS, out = [];
out.push(fib(W.fib));
out.push(trees(W.trees));
for (var r = 0; r < W.rounds; r++) {
    out.push(sieve(W.sieve));
    out.push(strings(W.strings));
    out.push(json(W.json));
    out.push(sorting(W.sort));
    out.push(closures(W.closures));
    out.push(classes(W.classes));
}
print(out.join(' '));
