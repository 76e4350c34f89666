/* trace_html.js: the script of gimpi-trace's page.  It parses the trace embedded in the
   page (Chrome trace-event JSON: "M" names, "X" and "B"/"E" slices, "s"/"f" flows, "C"
   counters, "i" instants; other phases are counted and ignored) and draws XPVM's views in
   one SVG: a space-time diagram (a row per task, a bar per call coloured by its category
   computing / overhead / waiting, a red line per message from send to receive) and the
   utilisation strip below it (how many tasks compute, are in overhead or wait, over
   time).  Wheel, buttons, keys and drag zoom and pan; a hover shows what is under the
   mouse.  The page's body carries data-status ("ok" or "error"), data-rows, data-msgs
   and data-draw-ms (how long the first drawing took) for tests; "#selftest" in the
   address drives the zoom, the pan and a hover, and writes the outcome into
   data-selftest.  gimpi-trace inlines it in the page. */
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var CLASSES = ['compute', 'overhead', 'wait', 'other'];
  var NAMES = { compute: 'computing', overhead: 'overhead', wait: 'waiting', other: 'other' };
  var AXIS_H = 22, UTIL_H = 90, GAP = 26, PAD_R = 12;

  /* Makes an SVG element with attributes, appended to parent when given. */
  function el(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  /* Makes an HTML element with a class and text. */
  function hel(tag, cls, text, parent) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  /* An empty map whose keys can be any string (no inherited "constructor" or
     "__proto__"): the trace's ids and names key these. */
  function dict() { return Object.create(null); }

  /* A duration in microseconds as text with a unit (ns, us, ms, s). */
  function fmtDur(us) {
    var a = Math.abs(us);
    function p(v) { return String(Number(v.toPrecision(4))); }
    if (a === 0) return '0';
    if (a < 1) return p(us * 1000) + ' ns';
    if (a < 1000) return p(us) + ' \u00b5s';
    if (a < 1e6) return p(us / 1000) + ' ms';
    return p(us / 1e6) + ' s';
  }

  /* A task id as PVM writes it: a number in hex after a t; a string as it is. */
  function fmtTid(v) {
    return typeof v === 'number' ? 't' + v.toString(16) : String(v);
  }

  /* The category of a slice: computing, overhead, waiting or other. */
  function classify(ev) {
    var cats = String(ev.cat || '').split(',');
    for (var i = 0; i < 3; i++)
      if (cats.indexOf(CLASSES[i]) >= 0) return CLASSES[i];
    if (ev.name === 'compute') return 'compute';
    return 'other';
  }

  /* A short text of an event's args for a tooltip. */
  function fmtArgs(args) {
    if (!args || typeof args !== 'object') return '';
    var out = [];
    for (var k in args) {
      var v = args[k];
      out.push(k + ': ' + (typeof v === 'object' ? JSON.stringify(v) : String(v)));
    }
    return out.join('\n');
  }

  /* Counts an event the page does not draw, by its phase (and why). */
  function ignore(m, ph, why) {
    var k = (typeof ph === 'string' ? 'phase ' + ph : 'entries that are not events') + why;
    m.ignored[k] = (m.ignored[k] || 0) + 1;
  }

  /* The events in time order (the format does not ask a file to be sorted, and a merge
     writes task after task): at one time a flow's start before anything, its end after
     anything, all else in the file's order, which keeps each thread's B and E paired. */
  function byTime(events) {
    var keyed = events.map(function (ev, i) {
      var obj = ev && typeof ev === 'object', ts = obj ? Number(ev.ts) : NaN;
      return { ev: ev, i: i, ts: isFinite(ts) ? ts : -Infinity,
               r: obj && ev.ph === 's' ? 0 : obj && ev.ph === 'f' ? 2 : 1 };
    });
    keyed.sort(function (a, b) { return a.ts - b.ts || a.r - b.r || a.i - b.i; });
    return keyed.map(function (k) { return k.ev; });
  }

  /* Builds the model from the trace: rows (one per task or thread, sorted by host and
     id), their slices, instants and queue counters, the messages, the time range. */
  function buildModel(raw) {
    var events = Array.isArray(raw) ? raw : raw && raw.traceEvents;
    if (!Array.isArray(events)) throw new Error('the trace has no "traceEvents" array');
    var other = (raw && raw.otherData) || {};
    var gimpi = other.gimpi || null;
    var m = { rows: [], msgs: [], pending: [], globals: [], ignored: dict(), gimpi: gimpi,
              t0: Infinity, t1: -Infinity, nslices: 0 };
    var byKey = dict(), pnames = dict(), psort = dict(), flows = dict(), later = [];
    function row(pid, tid) {
      var key = pid + '/' + tid;
      var r = byKey[key];
      if (!r) {
        r = byKey[key] = { key: key, pid: pid, tid: tid, name: null, sort: null,
                           slices: [], open: [], instants: [], queue: [], depth: 1 };
        m.rows.push(r);
      }
      return r;
    }
    function seen(t) { if (t < m.t0) m.t0 = t; if (t > m.t1) m.t1 = t; }
    events = byTime(events);
    for (var i = 0; i < events.length; i++) {
      var ev = events[i];
      if (!ev || typeof ev !== 'object' || Array.isArray(ev)) { ignore(m, null, ''); continue; }
      var ph = ev.ph, ts = Number(ev.ts), pid = ev.pid === undefined ? 0 : ev.pid;
      var tid = ev.tid === undefined ? 0 : ev.tid, args = ev.args || {};
      if (ph === 'M') {
        if (ev.name === 'process_name') pnames[pid] = String(args.name);
        else if (ev.name === 'process_sort_index') psort[pid] = Number(args.sort_index);
        else if (ev.name === 'thread_name') row(pid, tid).name = String(args.name);
        else if (ev.name === 'thread_sort_index') row(pid, tid).sort = Number(args.sort_index);
        continue;
      }
      if (!isFinite(ts)) { ignore(m, ph, ' (no time)'); continue; }
      if (ph === 'X') {
        var dur = Math.max(0, Number(ev.dur) || 0);
        if (!isFinite(ts + dur)) { ignore(m, ph, ' (no time)'); continue; }
        row(pid, tid).slices.push({ ts: ts, end: ts + dur, name: String(ev.name), cls: classify(ev),
                                    args: args, open: args.unfinished === true });
        seen(ts); seen(ts + dur);
      } else if (ph === 'B') {
        row(pid, tid).open.push(ev); seen(ts);
      } else if (ph === 'E') {
        var r = row(pid, tid), b = r.open.pop();
        seen(ts);
        if (b) r.slices.push({ ts: Number(b.ts), end: ts, name: String(b.name), cls: classify(b),
                               args: Object.assign({}, b.args, args) });
      } else if (ph === 's' || ph === 'f' || ph === 't') {
        var key = (ev.cat || '') + '#' + (ev.id !== undefined ? ev.id : JSON.stringify(ev.id2));
        seen(ts);
        if (ph === 's') (flows[key] = flows[key] || []).push({ ts: ts, row: row(pid, tid), ev: ev });
        else if (ph === 'f' && flows[key] && flows[key].length) {
          var s = flows[key].shift();
          m.msgs.push({ from: s.row, to: row(pid, tid), ts: s.ts, te: ts,
                        args: Object.assign({}, s.ev.args, args), name: s.ev.name || ev.name });
        }
      } else if (ph === 'i' || ph === 'I' || ph === 'R' || ph === 'C') {
        seen(ts);
        later.push({ ev: ev, ts: ts, key: pid + '/' + tid, pid: pid });
      } else {
        ignore(m, ph, '');
      }
    }
    for (var k in flows) for (var j = 0; j < flows[k].length; j++) m.pending.push(flows[k][j]);
    if (!(m.t1 >= m.t0)) { m.t0 = 0; m.t1 = 1; }
    if (m.t1 === m.t0) m.t1 = m.t0 + 1;
    attachMarks(m, later, byKey);
    finishRows(m, pnames, psort);
    return m;
  }

  /* Puts the instants and the queue counters on the rows they belong to, once every row
     is known: a thread's, or else the process's only row; an instant of the whole job,
     or of a process with no single row, is drawn across all rows; a counter with no row
     is ignored (neither makes a row of its own). */
  function attachMarks(m, later, byKey) {
    var perPid = dict();
    m.rows.forEach(function (r) { (perPid[r.pid] = perPid[r.pid] || []).push(r); });
    later.forEach(function (x) {
      var ev = x.ev, args = ev.args || {}, r = byKey[x.key];
      if (!r && perPid[x.pid] && perPid[x.pid].length === 1) r = perPid[x.pid][0];
      if (ev.ph === 'C') {
        var n = Number(args.messages);
        if (ev.name === 'queue' && isFinite(n) && r) r.queue.push({ ts: x.ts, n: n });
        else ignore(m, 'C', '');
        return;
      }
      var inst = { ts: x.ts, name: String(ev.name), args: args };
      if (ev.s === 'g' || !r) m.globals.push(inst); else r.instants.push(inst);
    });
  }

  /* Closes the slices left open at the end (a B without its E: a call the task was still
     in), sorts and nests each row's slices, names and sorts the rows. */
  function finishRows(m, pnames, psort) {
    var tasks = dict();
    if (m.gimpi && Array.isArray(m.gimpi.tasks))
      m.gimpi.tasks.forEach(function (t) { if (t && t.tid) tasks[t.tid] = t; });
    m.rows.forEach(function (r) {
      r.open.forEach(function (b) {
        r.slices.push({ ts: Number(b.ts), end: m.t1, name: String(b.name), cls: classify(b),
                        args: b.args || {}, open: true });
      });
      r.slices.sort(function (a, b) { return a.ts - b.ts || (b.end - b.ts) - (a.end - a.ts); });
      var stack = [];
      r.slices.forEach(function (s) {
        while (stack.length && stack[stack.length - 1].end <= s.ts) stack.pop();
        s.depth = stack.length;
        if (s.depth + 1 > r.depth) r.depth = s.depth + 1;
        stack.push(s);
      });
      r.queue.sort(function (a, b) { return a.ts - b.ts; });
      m.nslices += r.slices.length;
      var word = (r.name || '').split(' ')[0];
      r.task = tasks[word] || null;
      r.id = r.task || /^t[0-9a-fA-F]+$/.test(word) ? word : r.pid + ':' + r.tid;
      r.host = pnames[r.pid] !== undefined ? pnames[r.pid] : (r.task && r.task.host) || '';
      r.label = r.name || ('pid ' + r.pid + ' tid ' + r.tid);
      r.psort = psort[r.pid] !== undefined ? psort[r.pid] : 0;
    });
    m.rows.sort(function (a, b) {
      return a.psort - b.psort || cmp(a.pid, b.pid) ||
             (a.sort !== null && b.sort !== null ? a.sort - b.sort : 0) || cmp(a.tid, b.tid);
    });
    m.rows.forEach(function (r, i) { r.index = i; });
    m.maxq = 0;
    m.rows.forEach(function (r) { r.queue.forEach(function (q) { if (q.n > m.maxq) m.maxq = q.n; }); });
  }

  /* Compares two ids that may be numbers or strings. */
  function cmp(a, b) {
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
  }

  /* The utilisation as a step function: at each change time, how many rows are in each
     category (the innermost slice of a row decides), and the integrals, so that the mean
     count over any interval is two look-ups. */
  function buildUtil(m) {
    var changes = [];
    m.rows.forEach(function (r) {
      var stack = [], cursor = 0;
      function emit(a, b, cls) {
        if (b > a) { changes.push([a, cls, 1]); changes.push([b, cls, -1]); }
      }
      function popUntil(t) {
        while (stack.length && stack[stack.length - 1].end <= t) {
          var x = stack.pop();
          emit(cursor, x.end, x.cls);
          cursor = Math.max(cursor, x.end);
        }
      }
      r.slices.forEach(function (s) {
        popUntil(s.ts);
        if (stack.length) emit(cursor, s.ts, stack[stack.length - 1].cls);
        cursor = s.ts;
        stack.push(s);
      });
      popUntil(Infinity);
    });
    changes.sort(function (a, b) { return a[0] - b[0]; });
    var u = { t: [], count: [], integ: [] }, cur = [0, 0, 0, 0], acc = [0, 0, 0, 0], last = m.t0;
    changes.forEach(function (c) {
      var ci = CLASSES.indexOf(c[1]);
      for (var i = 0; i < 4; i++) acc[i] += cur[i] * (c[0] - last);
      last = c[0];
      cur[ci] += c[2];
      var n = u.t.length;
      if (n && u.t[n - 1] === c[0]) { u.count[n - 1] = cur.slice(); u.integ[n - 1] = acc.slice(); }
      else { u.t.push(c[0]); u.count.push(cur.slice()); u.integ.push(acc.slice()); }
    });
    u.used = [0, 1, 2, 3].map(function (i) {
      return u.count.some(function (c) { return c[i] > 0; });
    });
    return u;
  }

  /* The integral of category i of the utilisation from the start to time t. */
  function utilAt(u, i, t) {
    var lo = 0, hi = u.t.length - 1;
    if (hi < 0 || t <= u.t[0]) return 0;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (u.t[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return u.integ[lo][i] + u.count[lo][i] * (t - u.t[lo]);
  }

  /* A "nice" tick step (1, 2 or 5 times a power of ten) for a span shown in px pixels. */
  function tickStep(span, px) {
    var raw = span / Math.max(1, px / 90), p = Math.pow(10, Math.floor(Math.log10(raw)));
    var f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
  }

  /* The view: the SVG, the time window shown, and how it maps to pixels. */
  function View(m, u, host) {
    this.m = m; this.u = u; this.host = host;
    this.v0 = m.t0; this.v1 = m.t1;
    var longest = 8;
    m.rows.forEach(function (r) { longest = Math.max(longest, r.label.length + r.host.length + 2); });
    this.labelW = Math.min(300, 12 + longest * 6.6);
    this.svg = el('svg', { 'class': 'trace' }, host);
    this.rowsY = AXIS_H;
  }

  /* Pixel x of time t in the current window. */
  View.prototype.x = function (t) {
    return this.labelW + (t - this.v0) / (this.v1 - this.v0) * this.plotW;
  };

  /* Time at pixel x. */
  View.prototype.t = function (x) {
    return this.v0 + (x - this.labelW) / this.plotW * (this.v1 - this.v0);
  };

  /* Sets the time window, kept inside the trace (with a margin) and at least 1 ns. */
  View.prototype.setWindow = function (a, b) {
    var m = this.m, pad = (m.t1 - m.t0) * 0.05, lo = m.t0 - pad, hi = m.t1 + pad;
    var span = Math.min(Math.max(b - a, 0.001), hi - lo);
    if (a < lo) a = lo;
    if (a + span > hi) a = hi - span;
    this.v0 = a; this.v1 = a + span;
    this.schedule();
  };

  /* Zooms by factor (below 1: in) around time c. */
  View.prototype.zoom = function (factor, c) {
    if (c === undefined) c = (this.v0 + this.v1) / 2;
    this.setWindow(c - (c - this.v0) * factor, c + (this.v1 - c) * factor);
  };

  /* Pans by a fraction of the window. */
  View.prototype.pan = function (frac) {
    var d = (this.v1 - this.v0) * frac;
    this.setWindow(this.v0 + d, this.v1 + d);
  };

  /* Asks for a redraw at the next frame. */
  View.prototype.schedule = function () {
    var self = this;
    if (this.pendingDraw) return;
    this.pendingDraw = true;
    requestAnimationFrame(function () { self.pendingDraw = false; self.draw(); });
  };

  /* Row height from the window's height (XPVM's thick bars for a few tasks, at least
     12 px for many), and where the utilisation strip and the bottom are. */
  View.prototype.layout = function () {
    var top = this.host.getBoundingClientRect().top + window.scrollY;
    var room = (window.innerHeight || 700) - top - AXIS_H - GAP - UTIL_H - 60;
    this.rowH = Math.max(12, Math.min(52, Math.floor(room / Math.max(1, this.m.rows.length))));
    this.barH = Math.round(this.rowH * 0.7);
    this.utilY = AXIS_H + this.m.rows.length * this.rowH + GAP;
    this.height = this.utilY + UTIL_H + 18;
  };

  /* Redraws everything for the current window and width. */
  View.prototype.draw = function () {
    var width = Math.max(500, this.host.clientWidth || 1000);
    this.plotW = width - this.labelW - PAD_R;
    this.layout();
    var svg = this.svg;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute('width', width);
    svg.setAttribute('height', this.height);
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + this.height);
    var defs = el('defs', {}, svg), clip = el('clipPath', { id: 'plotclip' }, defs);
    el('rect', { x: this.labelW, y: 0, width: this.plotW, height: this.height }, clip);
    el('rect', { 'class': 'plotbg', x: this.labelW, y: 0, width: this.plotW, height: this.height }, svg);
    this.drawAxis(svg);
    var plot = el('g', { 'clip-path': 'url(#plotclip)' }, svg);
    this.drawRows(svg, plot);
    this.drawMsgs(plot);
    this.drawUtil(svg, plot);
    this.cursor = el('line', { 'class': 'cursor', y1: AXIS_H, y2: this.height - 18, x1: -10, x2: -10 }, svg);
    this.band = el('rect', { 'class': 'band', x: 0, y: 0, width: 0, height: this.height }, svg);
    if (this.onDraw) this.onDraw();
  };

  /* The time axis on top (relative to the trace's start) and its grid lines. */
  View.prototype.drawAxis = function (svg) {
    var g = el('g', { 'class': 'axis' }, svg), span = this.v1 - this.v0;
    var step = tickStep(span, this.plotW), m = this.m;
    var first = Math.ceil((this.v0 - m.t0) / step) * step;
    for (var t = first; t <= this.v1 - m.t0; t += step) {
      var x = this.x(m.t0 + t);
      el('line', { x1: x, x2: x, y1: AXIS_H - 5, y2: AXIS_H }, g);
      el('line', { 'class': 'grid', x1: x, x2: x, y1: AXIS_H, y2: this.height - 18 }, g);
      if (x < this.labelW + this.plotW - 45)      /* (no label cut at the right edge) */
        el('text', { x: x + 2, y: AXIS_H - 8 }, g).textContent = fmtDur(Math.round(t / step) * step);
    }
    el('line', { x1: this.labelW, x2: this.labelW + this.plotW, y1: AXIS_H, y2: AXIS_H }, g);
  };

  /* The rows: label, track, slices (nested ones thinner), instants, queue lengths. */
  View.prototype.drawRows = function (svg, plot) {
    var self = this, m = this.m, labels = el('g', { 'class': 'labels' }, svg);
    var rows = el('g', { 'class': 'rows' }, plot);
    m.rows.forEach(function (r) {
      var y = self.rowsY + r.index * self.rowH, yb = y + (self.rowH - self.barH) / 2;
      var g = el('g', { 'class': 'row', 'data-tid': r.id, 'data-host': r.host, 'data-row': r.index }, rows);
      var lab = el('text', { 'class': 'label', x: 4, y: y + self.rowH / 2 + 4, 'data-tip': self.rowTip(r) }, labels);
      if (r.host) el('tspan', { 'class': 'hostname' }, lab).textContent = r.host + ' ';
      el('tspan', {}, lab).appendChild(document.createTextNode(r.label));
      if (r.stuck) lab.setAttribute('class', 'label stuck');
      el('line', { 'class': 'rowline', x1: 0, x2: self.labelW + self.plotW, y1: y + self.rowH, y2: y + self.rowH }, svg);
      if (r.slices.length) {
        var a = Math.max(self.v0, r.slices[0].ts), b = Math.min(self.v1, r.lastEnd);
        if (b > a) el('rect', { 'class': 'track', x: self.x(a), y: yb, width: self.x(b) - self.x(a), height: self.barH }, g);
      }
      var lastPx = [];
      r.slices.forEach(function (s) {
        if (s.end < self.v0 || s.ts > self.v1) return;
        var x0 = Math.max(self.x(s.ts), self.labelW - 2), x1 = Math.min(self.x(s.end), self.labelW + self.plotW + 2);
        var key = s.depth + s.cls;
        if (x1 - x0 < 1) {
          if (lastPx[key] === Math.floor(x0)) return;
          lastPx[key] = Math.floor(x0);
          x1 = x0 + 1;
        }
        var inset = Math.min(s.depth * 2, self.barH / 2 - 2);
        el('rect', { 'class': 'slice ' + s.cls + (s.open ? ' open' : ''), x: x0, y: yb + inset, width: x1 - x0,
                     height: self.barH - 2 * inset, 'data-tip': self.sliceTip(r, s) }, g);
      });
      self.drawQueue(g, r, yb);
      r.instants.forEach(function (it) {
        if (it.ts < self.v0 || it.ts > self.v1) return;
        var x = self.x(it.ts);
        el('path', { 'class': 'instant', d: 'M' + (x - 4) + ' ' + y + 'h8l-4 5z',
                     'data-tip': it.name + ' at ' + fmtDur(it.ts - m.t0) + '\n' + fmtArgs(it.args) }, g);
      });
    });
    m.globals.forEach(function (it) {
      if (it.ts < self.v0 || it.ts > self.v1) return;
      var x = self.x(it.ts);
      el('line', { 'class': 'ginstant', x1: x, x2: x, y1: AXIS_H, y2: self.utilY - GAP + 4,
                   'data-tip': it.name + ' at ' + fmtDur(it.ts - m.t0) + '\n' + fmtArgs(it.args) }, plot);
    });
  };

  /* A row's queue of unreceived messages, as a dark band at the bottom of its bar whose
     height follows the queue length (the trace's longest queue fills the bar). */
  View.prototype.drawQueue = function (g, r, yb) {
    if (!r.queue.length || !this.m.maxq) return;
    var d = '', self = this, h = self.barH / 2 / this.m.maxq, base = yb + self.barH;
    r.queue.forEach(function (q, i) {
      var end = i + 1 < r.queue.length ? r.queue[i + 1].ts : self.m.t1;
      if (end < self.v0 || q.ts > self.v1 || q.n <= 0) return;
      var x0 = Math.max(self.x(q.ts), self.labelW - 2), x1 = Math.min(self.x(end), self.labelW + self.plotW + 2);
      d += 'M' + x0.toFixed(1) + ' ' + base + 'V' + (base - q.n * h).toFixed(1) + 'H' + Math.max(x1, x0 + 1).toFixed(1) + 'V' + base + 'z';
    });
    if (d) el('path', { 'class': 'queue', d: d, 'data-tip': r.label + ': messages queued (not yet received); most ' + this.m.maxq }, g);
  };

  /* The tooltip of a row's label: the task, and its last call (where a hang is read). */
  View.prototype.rowTip = function (r) {
    var t = r.label + (r.host ? ' on ' + r.host : '');
    if (r.task && r.task.pid !== undefined) t += ' (pid ' + r.task.pid + ')';
    var last = r.lastCall;
    if (last) t += '\nlast call: ' + last.name + ' (' + NAMES[last.cls] + ') at ' + fmtDur(last.ts - this.m.t0) +
                   (last.open ? ', still in it at the end' : ', for ' + fmtDur(last.end - last.ts));
    return t + '\n' + r.slices.length + ' slices';
  };

  /* The tooltip of a slice. */
  View.prototype.sliceTip = function (r, s) {
    return s.name + ' (' + NAMES[s.cls] + ')\n' + r.label + '\nat ' + fmtDur(s.ts - this.m.t0) +
           (s.open ? ', not returned by the end of the trace' : ', for ' + fmtDur(s.end - s.ts)) +
           (fmtArgs(s.args) ? '\n' + fmtArgs(s.args) : '');
  };

  /* The first lines of a message's hover text: who to whom, tag, bytes, context. */
  function msgTip(a, from, to) {
    return 'message ' + fmtTid(a.src !== undefined ? a.src : from.id) + ' \u2192 ' +
      (a.dst !== undefined ? fmtTid(a.dst) : to ? to.id : '?') + '\ntag ' + a.tag + ', ' + a.bytes +
      ' bytes' + (a.ctx !== undefined ? ', context ' + a.ctx : '');
  }

  /* One line per message, from the sender's row at the send to the receiver's row at the
     receive; messages never received, as dashed stubs to the end of the trace (towards
     the addressee's row when it is known). */
  View.prototype.drawMsgs = function (plot) {
    var self = this, m = this.m, g = el('g', { 'class': 'msgs' }, plot);
    function cy(r) { return self.rowsY + r.index * self.rowH + self.rowH / 2; }
    m.msgs.forEach(function (msg) {
      if (msg.te < self.v0 || msg.ts > self.v1) return;
      var a = msg.args, tip = msgTip(a, msg.from, msg.to) + '\nsent at ' + fmtDur(msg.ts - m.t0) +
          ', received ' + fmtDur(msg.te - msg.ts) + ' later';
      var attrs = { x1: self.x(msg.ts), y1: cy(msg.from), x2: self.x(msg.te), y2: cy(msg.to) };
      var line = el('line', Object.assign({ 'class': 'msg', 'data-tag': a.tag, 'data-bytes': a.bytes,
                    'data-src': msg.from.id, 'data-dst': msg.to.id, 'data-tip': tip }, attrs), g);
      var hit = el('line', Object.assign({ 'class': 'msghit', 'data-tip': tip }, attrs), g);
      hit.peer = line;
    });
    var byId = dict();
    m.rows.forEach(function (r) { byId[r.id] = r; });
    m.pending.forEach(function (p) {
      if (p.ts > self.v1) return;
      var a = p.ev.args || {}, to = a.dst !== undefined ? byId[fmtTid(a.dst)] : null, y1 = cy(p.row);
      var y2 = to ? y1 + (cy(to) - y1) / 3 : y1 - self.rowH / 3;
      el('line', { 'class': 'msg-pending', x1: self.x(p.ts), y1: y1, x2: self.x(m.t1), y2: y2,
                   'data-tip': msgTip(a, p.row, to) + '\nsent at ' + fmtDur(p.ts - m.t0) +
                   ', not received by the end of the trace' }, g);
    });
  };

  /* The utilisation strip: per pixel column, the mean number of tasks computing, in
     overhead, waiting (and in other slices), stacked bottom to top as XPVM did. */
  View.prototype.drawUtil = function (svg, plot) {
    var u = this.u, n = Math.max(1, this.m.rows.length), y0 = this.utilY, yb = y0 + UTIL_H;
    var ax = el('g', { 'class': 'uaxis' }, svg);
    var g = el('g', { 'class': 'util' }, plot), bins = Math.max(1, Math.floor(this.plotW / 2));
    el('rect', { 'class': 'utilbg', x: this.labelW, y: y0, width: this.plotW, height: UTIL_H }, g);
    el('text', { x: 4, y: y0 + 12 }, ax).textContent = 'utilisation';
    el('text', { x: 4, y: y0 + 26 }, ax).textContent = '(tasks)';
    [0, n].forEach(function (k) {
      el('text', { x: this.labelW - 4, y: yb - k / n * UTIL_H + 4, 'text-anchor': 'end' }, ax).textContent = k;
    }, this);
    var tops = [], paths = ['', '', '', ''], base = [];
    for (var b = 0; b <= bins; b++) base.push(0);
    for (var i = 0; i < 4; i++) {
      if (!u.used[i]) continue;
      tops = [];
      for (b = 0; b < bins; b++) {
        var ta = this.t(this.labelW + b * 2), tb = this.t(this.labelW + (b + 1) * 2);
        var mean = (utilAt(u, i, tb) - utilAt(u, i, ta)) / (tb - ta);
        tops.push(base[b] + Math.max(0, mean));
      }
      var d = 'M' + this.labelW + ' ' + (yb - base[0] / n * UTIL_H);
      for (b = 0; b < bins; b++)
        d += 'H' + (this.labelW + b * 2) + 'V' + (yb - tops[b] / n * UTIL_H).toFixed(1) + 'h2';
      for (b = bins - 1; b >= 0; b--)
        d += 'V' + (yb - base[b] / n * UTIL_H).toFixed(1) + 'H' + (this.labelW + b * 2);
      paths[i] = d + 'z';
      for (b = 0; b < bins; b++) base[b] = tops[b];
    }
    for (i = 0; i < 4; i++)
      if (paths[i]) el('path', { 'class': 'util-' + CLASSES[i], d: paths[i], 'data-util': CLASSES[i] }, g);
    el('line', { x1: this.labelW, x2: this.labelW + this.plotW, y1: yb, y2: yb }, ax);
  };

  /* The header: title, summary, buttons and legend. */
  function buildHeader(m, view) {
    var h = hel('header', '', undefined, document.body);
    hel('h1', '', document.title, h);
    var nt = m.gimpi && Array.isArray(m.gimpi.tasks) ? m.gimpi.tasks.length : m.rows.length;
    hel('span', 'summary', nt + ' tasks, ' + m.msgs.length + ' messages' +
        (m.pending.length ? ' (' + m.pending.length + ' never received)' : '') +
        ', ' + fmtDur(m.t1 - m.t0), h);
    var stuck = m.rows.filter(function (r) { return r.stuck; });
    if (stuck.length)
      hel('span', 'stuck-list', 'in a call at the end: ' + stuck.slice(0, 4).map(function (r) {
        return r.id + ' ' + r.lastCall.name;
      }).join(', ') + (stuck.length > 4 ? ' and ' + (stuck.length - 4) + ' more' : ''), h);
    var tools = hel('span', 'tools', undefined, h);
    [['+', 'in', 'zoom in (wheel, +)', function () { view.zoom(0.5); }],
     ['\u2212', 'out', 'zoom out (wheel, -)', function () { view.zoom(2); }],
     ['fit', 'fit', 'the whole trace (0)', function () { view.setWindow(m.t0, m.t1); }],
     ['\u2190', 'earlier', 'earlier (left arrow, drag)', function () { view.pan(-0.25); }],
     ['\u2192', 'later', 'later (right arrow, drag)', function () { view.pan(0.25); }]].forEach(function (b) {
      var e = hel('button', '', b[0], tools);
      e.setAttribute('data-act', b[1]);
      e.title = b[2];
      e.addEventListener('click', b[3]);
    });
    var lab = hel('label', '', undefined, tools), cb = hel('input', '', undefined, lab);
    cb.type = 'checkbox';
    lab.appendChild(document.createTextNode(' waiting in red'));
    cb.addEventListener('change', function () { document.body.classList.toggle('wait-red', cb.checked); });
    var lg = hel('span', 'legend', undefined, h);
    [['compute', 'computing'], ['overhead', 'overhead (in a call)'], ['wait', 'waiting'],
     ['util-wait', 'waiting (utilisation)'], ['msg', 'message']].concat(
      m.rows.some(function (r) { return r.slices.some(function (s) { return s.cls === 'other'; }); })
        ? [['other', 'other']] : []).forEach(function (x) {
      var s = hel('span', '', undefined, lg);
      hel('i', x[0], undefined, s);
      s.appendChild(document.createTextNode(x[1]));
    });
  }

  /* Shows the text of the element under the mouse that has a data-tip. */
  function tooltip(view, status) {
    var tip = hel('div', '', undefined, document.body), hot = null;
    tip.id = 'tip';
    view.svg.addEventListener('mousemove', function (e) {
      var t = e.target.closest ? e.target.closest('[data-tip]') : null;
      if (hot) { hot.classList.remove('hot'); hot = null; }
      if (t && t.peer) { hot = t.peer; hot.classList.add('hot'); }
      if (t) {
        tip.textContent = t.getAttribute('data-tip');
        tip.style.display = 'block';
        var x = e.clientX + 14, y = e.clientY + 14;
        if (x + tip.offsetWidth > window.innerWidth) x = e.clientX - tip.offsetWidth - 8;
        if (y + tip.offsetHeight > window.innerHeight) y = e.clientY - tip.offsetHeight - 8;
        tip.style.left = x + 'px'; tip.style.top = y + 'px';
      } else {
        tip.style.display = 'none';
      }
      var r = view.svg.getBoundingClientRect(), px = e.clientX - r.left;
      if (px >= view.labelW && px <= view.labelW + view.plotW) {
        view.cursor.setAttribute('x1', px); view.cursor.setAttribute('x2', px);
        status.textContent = 'time ' + fmtDur(view.t(px) - view.m.t0) + '   window ' +
          fmtDur(view.v0 - view.m.t0) + ' \u2013 ' + fmtDur(view.v1 - view.m.t0) +
          ' (' + fmtDur(view.v1 - view.v0) + ')';
      }
    });
    view.svg.addEventListener('mouseleave', function () {
      tip.style.display = 'none';
      view.cursor.setAttribute('x1', -10); view.cursor.setAttribute('x2', -10);
    });
  }

  /* Wheel (zoom at the mouse; shift or a sideways wheel pans), drag (pans; with shift,
     or on the time axis or the utilisation strip, sweeps a window to zoom into, as
     XPVM's middle button did) and keys (+ - 0 and the arrows). */
  function interact(view) {
    var svg = view.svg, drag = null;
    function px(e) { return e.clientX - svg.getBoundingClientRect().left; }
    function py(e) { return e.clientY - svg.getBoundingClientRect().top; }
    svg.addEventListener('wheel', function (e) {
      e.preventDefault();
      var x = px(e);
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        view.pan((e.deltaX || e.deltaY) / view.plotW);
      } else if (x >= view.labelW) {
        view.zoom(Math.exp(e.deltaY * 0.002), view.t(x));
      } else {
        view.zoom(Math.exp(e.deltaY * 0.002));
      }
    }, { passive: false });
    svg.addEventListener('mousedown', function (e) {
      if (e.button !== 0 || px(e) < view.labelW) return;
      var y = py(e), sweep = e.shiftKey || y < AXIS_H || y > view.utilY;
      drag = { x: px(e), v0: view.v0, v1: view.v1, sweep: sweep };
      document.body.classList.add('dragging');
      e.preventDefault();
    });
    window.addEventListener('mousemove', function (e) {
      if (!drag) return;
      var x = px(e);
      if (drag.sweep) {
        view.band.setAttribute('x', Math.min(x, drag.x));
        view.band.setAttribute('width', Math.abs(x - drag.x));
      } else {
        var dt = (x - drag.x) / view.plotW * (drag.v1 - drag.v0);
        view.setWindow(drag.v0 - dt, drag.v1 - dt);
      }
    });
    window.addEventListener('mouseup', function (e) {
      if (!drag) return;
      var x = px(e), d = drag;
      drag = null;
      document.body.classList.remove('dragging');
      view.band.setAttribute('width', 0);
      if (d.sweep && Math.abs(x - d.x) > 3)
        view.setWindow(view.t(Math.min(x, d.x)), view.t(Math.max(x, d.x)));
    });
    window.addEventListener('keydown', function (e) {
      var k = e.key;
      if (k === '+' || k === '=') view.zoom(0.5);
      else if (k === '-') view.zoom(2);
      else if (k === '0') view.setWindow(view.m.t0, view.m.t1);
      else if (k === 'ArrowLeft') view.pan(-0.25);
      else if (k === 'ArrowRight') view.pan(0.25);
    });
    window.addEventListener('resize', function () { view.schedule(); });
  }

  /* "#selftest": zooms with the wheel, pans by a drag and by a button, fits, and writes
     the outcome into the body's data-selftest ("ok" and the steps, or what failed). */
  function selftest(view) {
    var svg = view.svg, r = svg.getBoundingClientRect(), steps = [], m = view.m;
    var cx = r.left + view.labelW + view.plotW / 2, cy = r.top + AXIS_H + 4;
    function span() { return view.v1 - view.v0; }
    function check(what, cond) { steps.push((cond ? 'ok ' : 'FAILED ') + what); }
    var full = span();
    svg.dispatchEvent(new WheelEvent('wheel', { deltaY: -500, clientX: cx, clientY: cy + 10, bubbles: true, cancelable: true }));
    check('wheel zooms in', span() < full * 0.5);
    var z = span(), v0 = view.v0;
    svg.dispatchEvent(new MouseEvent('mousedown', { button: 0, clientX: cx, clientY: cy + 10, bubbles: true }));
    window.dispatchEvent(new MouseEvent('mousemove', { clientX: cx - 100, clientY: cy + 10 }));
    window.dispatchEvent(new MouseEvent('mouseup', { clientX: cx - 100, clientY: cy + 10 }));
    check('drag pans later', view.v0 > v0 && Math.abs(span() - z) < z * 1e-6);
    v0 = view.v0;
    document.querySelector('button[data-act="earlier"]').click();
    check('button pans earlier', view.v0 < v0);
    svg.dispatchEvent(new MouseEvent('mousedown', { button: 0, shiftKey: true, clientX: cx - 50, clientY: cy, bubbles: true }));
    window.dispatchEvent(new MouseEvent('mouseup', { clientX: cx + 50, clientY: cy }));
    check('shift-drag sweeps a window', span() < z * 0.5);
    document.querySelector('button[data-act="fit"]').click();
    check('fit shows the whole trace', view.v0 === m.t0 && view.v1 === m.t1);
    view.draw();
    check('redraw keeps one row per task', document.querySelectorAll('g.row').length === m.rows.length);
    var line = document.querySelector('line.msghit'), tip = document.getElementById('tip');
    if (line) {
      var lr = line.getBoundingClientRect();
      line.dispatchEvent(new MouseEvent('mousemove', { clientX: lr.left + lr.width / 2, clientY: lr.top + lr.height / 2, bubbles: true }));
      check('hover on a message shows its tag and bytes', tip.style.display === 'block' &&
            /tag .*bytes/.test(tip.textContent) && document.querySelectorAll('line.msg.hot').length === 1);
    }
    var bad = steps.filter(function (s) { return s.indexOf('FAILED') === 0; }).length;
    document.body.setAttribute('data-selftest', (bad ? 'failed' : 'ok') + ': ' + steps.join('; '));
  }

  /* What gimpi's merge says of the job (otherData.gimpi), as lines for the footer: when
     it started, each host's clock against the reference, and what the trace lacks. */
  function jobInfo(m) {
    var g = m.gimpi, out = [];
    if (!g) return out;
    var t0 = Number(g.t0_ns);
    if (t0 > 0) out.push('started ' + new Date(t0 / 1e6).toISOString().replace('T', ' ').replace(/\..*/, ' UTC'));
    if (Array.isArray(g.hosts))
      out.push('clocks: ' + g.hosts.map(function (h) {
        return h.name + ' ' + fmtDur(Number(h.offset_ns) / 1000) + ' \u00b1 ' + fmtDur(Number(h.offset_err_ns) / 1000) +
          (Number(h.shift_ns) ? ', shifted ' + fmtDur(Number(h.shift_ns) / 1000) + (h.shift_within_error ? '' : ' (beyond its error)') : '');
      }).join('; '));
    var lacks = [['lost_records', 'records lost (a ring filled)'], ['unpaired_calls', 'calls unpaired'],
                 ['unmatched_sends', 'sends never received'], ['unmatched_receives', 'receives of unrecorded sends']]
      .filter(function (x) { return Number(g[x[0]]) > 0; })
      .map(function (x) { return g[x[0]] + ' ' + x[1]; });
    if (lacks.length) out.push('the trace lacks: ' + lacks.join(', '));
    return out;
  }

  /* Loads, builds and draws; a failure is shown on the page and in data-status. */
  function main() {
    var body = document.body;
    try {
      var m = buildModel(JSON.parse(document.getElementById('gimpi-trace-data').textContent));
      m.rows.forEach(function (r) {
        var last = null, lastEnd = -Infinity;
        r.slices.forEach(function (s) {
          if (s.end > lastEnd) lastEnd = s.end;
          if (s.cls !== 'compute' && (!last || s.ts >= last.ts)) last = s;
        });
        r.lastCall = last; r.lastEnd = lastEnd;
        r.stuck = !!(last && (last.open || (last.cls === 'wait' && last.end >= m.t1)));
      });
      var view;
      var holder = hel('div', '', undefined, null);
      holder.id = 'view';
      view = new View(m, buildUtil(m), holder);
      buildHeader(m, view);
      var status = hel('div', '', 'Hover over a bar, a line or a task for details.', body);
      status.id = 'status';
      body.appendChild(holder);
      var ign = Object.keys(m.ignored).sort();
      var foot = hel('footer', '', m.rows.length + ' rows, ' + m.nslices + ' slices, ' + m.msgs.length + ' messages' +
          (ign.length ? '; ignored: ' + ign.map(function (k) { return m.ignored[k] + ' of ' + k; }).join(', ') : '') +
          '.  Wheel: zoom; drag: pan; shift-drag or drag on the axis: zoom into a window.', body);
      jobInfo(m).forEach(function (line) { hel('div', 'job', line, foot); });
      var t0 = performance.now();
      view.draw();
      body.setAttribute('data-draw-ms', Math.round(performance.now() - t0));
      tooltip(view, status);
      interact(view);
      body.setAttribute('data-rows', m.rows.length);
      body.setAttribute('data-msgs', m.msgs.length);
      body.setAttribute('data-status', 'ok');
      if (location.hash === '#selftest') selftest(view);
    } catch (err) {
      var e = hel('div', '', 'gimpi-trace: this trace cannot be drawn: ' + (err && err.message), body);
      e.id = 'error';
      body.setAttribute('data-status', 'error');
      body.setAttribute('data-error', String(err && err.message));
    }
  }

  main();
})();
