// TrackCanvas: the envs of one cook drawn with Canvas 2D, from binary buffers.
// One cook is one state update (seq moves last); the grid of small multiples, the gates,
// the counts table and the hover metrics all come from it. Click an env: it is drawn large
// (drag pans, the wheel zooms, Escape anywhere in the view or "all envs" goes back) and the
// kernel is told which env (view.selected); no control value is sent. A pinned cook's
// tracks are drawn faintly behind each env, its counts beside the current ones. With the
// view's "racing line" ticked, each env's racing line is drawn coloured by speed and the
// hover shows its lap time.
const VALID = "#2a9d4b";
const INVALID = "#d1495b";
const GATE = "#1d5fa8";
const CLOUD_COLORS = ["#1d5fa8", "#e07a1f", "#2a9d4b", "#8e44ad", "#d1495b", "#555555"];
const PINNED = "rgba(90, 90, 90, 0.28)";
const MAX_HEIGHT = 420;
const CLOUD_HEIGHT = 320; // a graph's point clouds: room for its counts and node diagram
const NARROW_SHARE = 0.45; // a narrow view's picture: at most this share of the height
// the racing line's colour by speed, slow to fast (viridis stops)
const SPEED_STOPS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function speedColor(t) {
  const u = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (SPEED_STOPS.length - 1);
  const i = Math.min(SPEED_STOPS.length - 2, Math.floor(u)), f = u - i;
  const a = SPEED_STOPS[i], b = SPEED_STOPS[i + 1];
  const c = (k) => Math.round(a[k] + (b[k] - a[k]) * f);
  return `rgb(${c(0)},${c(1)},${c(2)})`;
}

function bytesOf(v) {
  if (!v) return null;
  if (v instanceof ArrayBuffer) return v;
  if (ArrayBuffer.isView(v)) return v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength);
  return null;
}
function f32(v) {
  const b = bytesOf(v);
  return b && b.byteLength ? new Float32Array(b) : new Float32Array(0);
}
function i32(v) {
  const b = bytesOf(v);
  return b && b.byteLength ? new Int32Array(b) : new Int32Array(0);
}
function fmt(x, digits = 3) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  if (typeof x === "string") return x;
  if (Number.isInteger(x)) return String(x);
  return Number(x).toPrecision(digits);
}
// The order point clouds are drawn in and each one's mark radius (px): the largest cloud
// first, in the smallest marks; each later (smaller or equal) cloud in marks smaller than
// the one drawn before it, so a cloud that repeats another's points (a stage that kept them
// all) shows as a ring around them: no cloud hides another.
export function cloudMarks(sizes) {
  const order = [...sizes.keys()].sort((a, b) => sizes[b] - sizes[a] || a - b);
  const n = order.length;
  return order.map((cloud, rank) => ({
    cloud,
    radius: n === 1 ? 1.8 : rank === 0 ? 1.2 : 1.2 + (1.4 * (n - rank)) / (n - 1),
  }));
}

// The legend of the grid of envs: the gate entry only where the envs have gates (G > 0).
export function legendEntries(G) {
  const out = [
    ["valid", VALID],
    ["invalid", INVALID],
  ];
  if (G > 0) out.push(["gate (number: order)", GATE]);
  return out;
}

// A gate number's font size (px): smaller in small cells, never left out.
export function gateFontPx(large, s) {
  return large ? 13 : s >= 110 ? 11 : 9;
}

// The box (x, y, width, height) of the number of a gate drawn at (gx, gy) px, text width
// tw: beside the gate, moved inside the cell (ox, oy, s) when it would cross its edge.
export function gateLabelBox(gx, gy, tw, fontPx, ox, oy, s, large) {
  const th = fontPx + 2;
  let bx = gx + 4, by = gy - th - 1;
  if (!large) {
    bx = Math.min(Math.max(bx, ox + 1), ox + s - tw - 4);
    by = Math.min(Math.max(by, oy + 1), oy + s - th - 1);
  }
  return { x: bx, y: by, w: tw + 3, h: th };
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function render({ model, el: root }) {
  root.classList.add("procgen-canvas");
  const main = el("div", "pc-main");
  const head = el("div", "pc-head");
  const title = el("span", "pc-title");
  const back = el("button", "pc-back jupyter-button", "← all envs");
  back.style.display = "none";
  const legend = el("span", "pc-legend");
  // the entries of the envs drawn (the gate entry only where there are gates)
  let legendG = -1;
  const showLegend = (G) => {
    if (G === legendG) return;
    legendG = G;
    legend.innerHTML =
      legendEntries(G)
        .map(([t, c]) => `<span data-entry="${t}"><i style="background:${c}"></i>${t}</span>`)
        .join("") + `<span><b>●</b> start, <b>→</b> direction</span>`;
  };
  showLegend(0);
  // the racing line's key: its colours from the slowest to the fastest speed drawn
  const speedKey = el("span", "pc-speed-key");
  speedKey.innerHTML =
    `racing line <span class="pc-speed-lo"></span> ` +
    `<i style="background:linear-gradient(90deg,${[0, 0.25, 0.5, 0.75, 1].map(speedColor).join(",")})"></i>` +
    ` <span class="pc-speed-hi"></span>`;
  speedKey.style.display = "none";
  head.append(back, title, legend, speedKey);
  const wrap = el("div", "pc-wrap");
  const canvas = el("canvas", "pc-canvas");
  canvas.tabIndex = 0;
  const overlay = el("div", "pc-overlay");
  const tip = el("div", "pc-tip");
  wrap.append(canvas, overlay, tip);
  const note = el("div", "pc-note");
  main.append(head, wrap, note);
  const side = el("div", "pc-side");
  const table = el("div", "pc-counts procgen-counts-text");
  const barsLabel = el("label", "pc-bars-toggle");
  const bars = el("input");
  bars.type = "checkbox";
  bars.checked = true;
  barsLabel.append(bars, document.createTextNode(" bars"));
  const sideHead = el("div", "pc-side-title", "counts ");
  sideHead.append(barsLabel);
  side.append(sideHead, table);
  root.append(main, side);

  let data = null; // what the last seq brought
  let cells = null; // grid geometry
  let zoom = null; // {env, scale, cx, cy} while one env is shown large
  let drag = null;
  const ctx = canvas.getContext("2d");

  function read() {
    const E = model.get("envs");
    const N = model.get("points");
    const G = model.get("slots");
    data = {
      E,
      N,
      G,
      shown: Math.min(model.get("shown"), E),
      tracks: f32(model.get("tracks")),
      valid: i32(model.get("valid")),
      reasons: i32(model.get("reasons")),
      metrics: model.get("metrics_seq") === model.get("seq") ? f32(model.get("metrics")) : new Float32Array(0),
      gates: f32(model.get("gates")),
      gateCount: i32(model.get("gate_count")),
      heading: f32(model.get("gate_heading")),
      cloud: f32(model.get("cloud")),
      cloudSizes: i32(model.get("cloud_sizes")),
      cloudLabels: model.get("cloud_labels") || [],
      counts: model.get("counts") || [],
      reasonLabels: model.get("reason_labels") || {},
      width: model.get("track_width") || 0,
      pinE: model.get("pin_envs") || 0,
      pinN: model.get("pin_points") || 0,
      pinTracks: f32(model.get("pin_tracks")),
      pinCounts: model.get("pin_counts") || [],
      racing: null,
    };
    // the racing line (the "racing line" toggle), when it is this picture's
    const rE = model.get("racing_envs") || 0, rN = model.get("racing_points") || 0;
    if (model.get("racing_on") && rE === E && rN > 1) {
      const xy = f32(model.get("racing_xy")), speed = f32(model.get("racing_speed"));
      const lap = f32(model.get("lap_time"));
      let lo = Infinity, hi = -Infinity;
      for (const v of speed) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      if (xy.length === rE * rN * 2 && speed.length === rE * rN) {
        data.racing = { N: rN, xy, speed, lap, lo, hi: hi > lo ? hi : lo + 1 };
      }
    }
    data.ext = extent();
    if (zoom && zoom.env >= data.E) zoom = null;
  }

  // one scale for every env: the largest half-extent around each env's own centre
  function extent() {
    const { E, N, tracks, gates, G, gateCount } = data;
    const centres = [];
    let half = 0;
    for (let e = 0; e < E; e++) {
      let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      const take = (x, y) => {
        if (!Number.isFinite(x) || !Number.isFinite(y)) return;
        x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
      };
      for (let i = 0; i < N; i++) take(tracks[(e * N + i) * 2], tracks[(e * N + i) * 2 + 1]);
      const c = G ? Math.min(gateCount[e] || 0, G) : 0;
      for (let k = 0; k < c; k++) take(gates[(e * G + k) * 2], gates[(e * G + k) * 2 + 1]);
      if (x0 === Infinity) { centres.push([0, 0]); continue; }
      centres.push([(x0 + x1) / 2, (y0 + y1) / 2]);
      half = Math.max(half, (x1 - x0) / 2, (y1 - y0) / 2);
    }
    return { centres, half: half > 0 ? half : 1 };
  }

  // the most the canvas may take (px): in a narrow view the picture over the form is
  // limited to a share of the notebook's height (stick), the canvas to what is left of it
  let heightCap = Infinity;
  function size() {
    const w = Math.max(160, Math.floor(wrap.clientWidth || main.clientWidth || 400));
    let h;
    if (!data || (data.shown === 0 && data.cloud.length === 0)) h = 120;
    else if (zoom) h = Math.min(w, MAX_HEIGHT, heightCap);
    else if (data.shown === 0) h = Math.min(w, CLOUD_HEIGHT, heightCap);
    else {
      const cols = Math.ceil(Math.sqrt(data.shown));
      const rows = Math.ceil(data.shown / cols);
      const cell = Math.min(w / cols, Math.min(MAX_HEIGHT, heightCap) / rows);
      h = Math.ceil(cell * rows);
    }
    const dpr = window.devicePixelRatio || 1;
    canvas.style.width = w + "px";
    canvas.style.height = h + "px";
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return { w, h };
  }

  function reasonText(bits) {
    if (!bits) return "";
    const out = [];
    for (const [b, t] of Object.entries(data.reasonLabels)) if (bits & Number(b)) out.push(t);
    return out.length ? out.join(", ") : `reason bits ${bits}`;
  }

  // draws env e into the square (ox, oy, s) px with world half-extent `half` around (cx, cy)
  function drawEnv(e, ox, oy, s, half, cx, cy, large) {
    const { N, tracks, valid, G, gates, gateCount, heading } = data;
    const k = (s / 2) / (half * 1.08);
    const X = (x) => ox + s / 2 + (x - cx) * k;
    const Y = (y) => oy + s / 2 - (y - cy) * k;
    const ok = valid[e] !== 0;
    if (e < data.pinE && data.pinN > 0) { // the pinned cook's env, faintly, behind
      const P = data.pinN, pt = data.pinTracks;
      ctx.strokeStyle = PINNED;
      ctx.lineWidth = large ? 3 : 2;
      ctx.setLineDash([]);
      ctx.beginPath();
      let on = false;
      for (let i = 0; i <= P; i++) {
        const j = i % P;
        const x = pt[(e * P + j) * 2], y = pt[(e * P + j) * 2 + 1];
        if (!Number.isFinite(x) || !Number.isFinite(y)) { on = false; continue; }
        if (!on) { ctx.moveTo(X(x), Y(y)); on = true; } else ctx.lineTo(X(x), Y(y));
      }
      ctx.stroke();
    }
    ctx.strokeStyle = ok ? VALID : INVALID;
    ctx.lineWidth = large ? 2 : 1.4;
    ctx.globalAlpha = data.racing ? 0.45 : 1; // the racing line over it is the one to read
    ctx.beginPath();
    let started = false;
    for (let i = 0; i <= N; i++) {
      const j = i % N;
      const x = tracks[(e * N + j) * 2], y = tracks[(e * N + j) * 2 + 1];
      if (!Number.isFinite(x) || !Number.isFinite(y)) { started = false; continue; }
      if (!started) { ctx.moveTo(X(x), Y(y)); started = true; } else ctx.lineTo(X(x), Y(y));
    }
    ctx.stroke();
    ctx.globalAlpha = 1;
    if (data.racing) { // the racing line, each segment coloured by its speed
      const R = data.racing, M = R.N;
      ctx.lineWidth = large ? 2.5 : 1.6;
      for (let i = 0; i < M; i++) {
        const a = e * M + i, b = e * M + ((i + 1) % M);
        const x0 = R.xy[a * 2], y0 = R.xy[a * 2 + 1], x1 = R.xy[b * 2], y1 = R.xy[b * 2 + 1];
        if (!Number.isFinite(x0) || !Number.isFinite(x1)) continue;
        ctx.strokeStyle = speedColor(((R.speed[a] + R.speed[b]) / 2 - R.lo) / (R.hi - R.lo));
        ctx.beginPath();
        ctx.moveTo(X(x0), Y(y0));
        ctx.lineTo(X(x1), Y(y1));
        ctx.stroke();
      }
    }
    if (N >= 2) {
      const x0 = tracks[e * N * 2], y0 = tracks[e * N * 2 + 1];
      const j = Math.max(1, Math.floor(N / 24));
      const x1 = tracks[(e * N + j) * 2], y1 = tracks[(e * N + j) * 2 + 1];
      if (Number.isFinite(x0) && Number.isFinite(x1)) {
        ctx.fillStyle = ok ? VALID : INVALID;
        ctx.beginPath();
        ctx.arc(X(x0), Y(y0), large ? 5 : 3, 0, 2 * Math.PI);
        ctx.fill();
        const dx = X(x1) - X(x0), dy = Y(y1) - Y(y0);
        const len = Math.hypot(dx, dy) || 1;
        const ux = dx / len, uy = dy / len, a = large ? 16 : 9;
        const tx = X(x0) + ux * a, ty = Y(y0) + uy * a;
        ctx.beginPath();
        ctx.moveTo(X(x0), Y(y0));
        ctx.lineTo(tx, ty);
        ctx.moveTo(tx, ty);
        ctx.lineTo(tx - ux * 5 - uy * 4, ty - uy * 5 + ux * 4);
        ctx.moveTo(tx, ty);
        ctx.lineTo(tx - ux * 5 + uy * 4, ty - uy * 5 - ux * 4);
        ctx.lineWidth = large ? 2 : 1.2;
        ctx.stroke();
      }
    }
    if (G) {
      const c = Math.min(gateCount[e] || 0, G);
      // the legend promises numbers: always drawn, smaller in small cells, kept inside
      const fontPx = gateFontPx(large, s);
      ctx.font = `${fontPx}px sans-serif`;
      ctx.textBaseline = "middle";
      for (let g = 0; g < c; g++) {
        const x = gates[(e * G + g) * 2], y = gates[(e * G + g) * 2 + 1];
        if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
        ctx.strokeStyle = GATE;
        ctx.fillStyle = GATE;
        const h = heading.length ? heading[e * G + g] : NaN;
        if (Number.isFinite(h)) {
          const w = Math.max(large ? 7 : 3.5, ((data.width || 0) / 2) * k);
          const ax = -Math.sin(h) * w, ay = -Math.cos(h) * w; // across the track, y flipped
          ctx.lineWidth = large ? 3 : 2;
          ctx.beginPath();
          ctx.moveTo(X(x) - ax, Y(y) - ay);
          ctx.lineTo(X(x) + ax, Y(y) + ay);
          ctx.stroke();
        } else {
          ctx.beginPath();
          ctx.arc(X(x), Y(y), large ? 4 : 2.5, 0, 2 * Math.PI);
          ctx.fill();
        }
        if (g === 0) {
          ctx.lineWidth = 1.5;
          ctx.strokeStyle = "#000";
          ctx.beginPath();
          ctx.arc(X(x), Y(y), large ? 9 : 5, 0, 2 * Math.PI);
          ctx.stroke();
        }
        {
          const t = String(g);
          const b = gateLabelBox(X(x), Y(y), ctx.measureText(t).width, fontPx, ox, oy, s, large);
          ctx.fillStyle = "rgba(255,255,255,0.85)";
          ctx.fillRect(b.x, b.y, b.w, b.h);
          ctx.fillStyle = GATE;
          ctx.fillText(t, b.x + 1.5, b.y + b.h / 2);
        }
      }
    }
    return { X, Y, k };
  }

  function drawAxes(w, h, X, Y, k) {
    // world ticks along the bottom and left edges of the large view
    const span = w / k;
    const step = Math.pow(10, Math.floor(Math.log10(span / 4)));
    const nice = span / step > 10 ? step * 2 : step;
    ctx.fillStyle = "#555";
    ctx.strokeStyle = "#bbb";
    ctx.lineWidth = 1;
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "bottom";
    const xw0 = (0 - X(0)) / k, xw1 = (w - X(0)) / k;
    for (let v = Math.ceil(xw0 / nice) * nice; v <= xw1; v += nice) {
      const px = X(v);
      ctx.beginPath(); ctx.moveTo(px, h); ctx.lineTo(px, h - 5); ctx.stroke();
      ctx.fillText(String(Number(v.toFixed(6))), px + 2, h - 6);
    }
    const yw0 = (Y(0) - h) / k, yw1 = Y(0) / k;
    ctx.textBaseline = "middle";
    for (let v = Math.ceil(yw0 / nice) * nice; v <= yw1; v += nice) {
      const py = Y(v);
      ctx.beginPath(); ctx.moveTo(0, py); ctx.lineTo(5, py); ctx.stroke();
      ctx.fillText(String(Number(v.toFixed(6))), 7, py);
    }
  }

  function drawClouds(w, h) {
    const { cloud, cloudSizes, cloudLabels } = data;
    let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    for (let i = 0; i < cloud.length; i += 2) {
      const x = cloud[i], y = cloud[i + 1];
      if (!Number.isFinite(x) || !Number.isFinite(y)) continue;
      x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
    }
    if (x0 === Infinity) return;
    const half = Math.max(x1 - x0, y1 - y0) / 2 || 1;
    // the legend takes a strip above the points: it hides none of them
    const legendH = 8 + 18 * cloudSizes.length;
    const ph = Math.max(40, h - legendH);
    const s = Math.min(w, ph);
    const k = (s / 2) / (half * 1.05);
    const cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
    const oy = legendH + ph / 2;
    const offs = [];
    let off = 0;
    cloudSizes.forEach((n) => { offs.push(off); off += n; });
    // no cloud hides another (cloudMarks): a repeated cloud shows as a ring
    cloudMarks(cloudSizes).forEach(({ cloud: c, radius: r }) => {
      const n = cloudSizes[c];
      ctx.fillStyle = CLOUD_COLORS[c % CLOUD_COLORS.length];
      for (let i = offs[c]; i < offs[c] + n; i++) {
        const x = cloud[i * 2], y = cloud[i * 2 + 1];
        if (!Number.isFinite(x)) continue;
        ctx.fillRect(w / 2 + (x - cx) * k - r, oy - (y - cy) * k - r, 2 * r, 2 * r);
      }
    });
    // the legend in its strip, on a background
    ctx.font = "12px sans-serif";
    ctx.textBaseline = "middle";
    const texts = cloudLabels.map((l, c) => `${l} (${cloudSizes[c]})`);
    const lw = Math.max(0, ...texts.map((t) => ctx.measureText(t).width)) + 28;
    ctx.fillStyle = "rgba(255,255,255,0.9)";
    ctx.fillRect(4, 4, lw, 8 + 18 * texts.length);
    ctx.strokeStyle = "#bbb";
    ctx.strokeRect(4.5, 4.5, lw - 1, 7 + 18 * texts.length);
    texts.forEach((t, c) => {
      ctx.fillStyle = CLOUD_COLORS[c % CLOUD_COLORS.length];
      ctx.fillRect(10, 12 + c * 18 - 5, 12, 10);
      ctx.fillStyle = "#222";
      ctx.fillText(t, 28, 12 + c * 18);
    });
  }

  function draw() {
    const t0 = performance.now();
    const { w, h } = size();
    ctx.clearRect(0, 0, w, h);
    cells = null;
    if (!data) return 0;
    if (zoom) {
      const { centres, half } = data.ext;
      const [cx0, cy0] = centres[zoom.env];
      const s = Math.min(w, h);
      const ox = (w - s) / 2 + zoom.px, oy = (h - s) / 2 + zoom.py;
      const { X, Y, k } = drawEnv(zoom.env, ox, oy, s, half / zoom.scale, cx0, cy0, true);
      drawAxes(w, h, X, Y, k);
      title.textContent = `env ${zoom.env} (drag to pan, wheel to zoom, Escape to go back)`;
    } else if (data.shown > 0) {
      const cols = Math.ceil(Math.sqrt(data.shown));
      const cell = Math.min(w / cols, h / Math.ceil(data.shown / cols));
      cells = { cols, cell };
      const { centres, half } = data.ext;
      ctx.font = "11px sans-serif";
      for (let e = 0; e < data.shown; e++) {
        const ox = (e % cols) * cell, oy = Math.floor(e / cols) * cell;
        ctx.strokeStyle = "#e4e4e4";
        ctx.lineWidth = 1;
        ctx.strokeRect(ox + 0.5, oy + 0.5, cell - 1, cell - 1);
        drawEnv(e, ox + 2, oy + 2, cell - 4, half, centres[e][0], centres[e][1], false);
        ctx.fillStyle = data.valid[e] ? "#333" : INVALID;
        ctx.textBaseline = "top";
        ctx.font = "11px sans-serif";
        ctx.fillText(String(e), ox + 4, oy + 3);
      }
      title.textContent = "hover an env for its metrics, click to enlarge";
    } else if (data.cloud.length) {
      drawClouds(w, h);
      title.textContent = "point clouds";
    } else {
      ctx.fillStyle = "#777";
      ctx.font = "13px sans-serif";
      ctx.textBaseline = "middle";
      ctx.fillText("nothing to draw yet", 12, h / 2);
      title.textContent = "";
    }
    back.style.display = zoom ? "" : "none";
    legend.style.display = data.shown > 0 ? "" : "none";
    showLegend(data.G || 0);
    speedKey.style.display = data.racing && data.shown > 0 ? "" : "none";
    if (data.racing) {
      speedKey.querySelector(".pc-speed-lo").textContent = fmt(data.racing.lo, 3);
      speedKey.querySelector(".pc-speed-hi").textContent = `${fmt(data.racing.hi, 3)} m/s`;
    }
    const dt = performance.now() - t0;
    return dt;
  }

  // counts of envs get a bar (out of all envs); other counts are numbers only
  function showCounts() {
    table.textContent = "";
    const rows = data ? data.counts : [];
    const envs = rows.find(([k]) => k === "envs");
    const total = envs ? envs[1] : data ? data.E : 0;
    const pinned = data && data.pinCounts.length ? new Map(data.pinCounts) : null;
    root.classList.toggle("pc-pinning", !!pinned);
    sideHead.firstChild.textContent = pinned ? "counts (now · pinned) " : "counts ";
    for (const [k, v] of rows) {
      const row = el("div", "pc-row");
      row.dataset.label = k;
      const bar = el("span", "pc-bar");
      const ofEnvs = /(^|\s)(valid|invalid|envs)|centerlines|layouts/.test(k);
      if (bars.checked && ofEnvs && typeof v === "number" && total > 0 && v >= 0) {
        const b = el("span");
        b.style.width = `${Math.min(48, (48 * v) / total)}px`;
        bar.append(b);
      }
      const label = el("span", "pc-label", k);
      label.title = k; // the full label when it is cut
      row.append(label, el("span", "pc-value", fmt(v, 4)));
      if (pinned) {
        const p = pinned.get(k);
        const cell = el("span", "pc-pinned", p === undefined ? "–" : fmt(p, 4));
        cell.title = "pinned";
        row.append(cell);
      }
      row.append(bar);
      table.append(row);
    }
  }

  function showNote() {
    if (!data) return;
    const parts = [];
    if (data.shown < data.E) parts.push(`showing the first ${data.shown} of ${data.E} envs`);
    note.textContent = parts.join(" · ");
  }

  function stale() {
    const s = model.get("stale");
    root.classList.toggle("pc-stale", s);
    overlay.textContent = s ? model.get("message") : "";
    overlay.style.display = s && model.get("message") ? "" : "none";
  }

  const now = () => performance.timeOrigin + performance.now(); // ms since the epoch

  function update() {
    const recv = now();
    read();
    const drawMs = draw();
    showCounts();
    showNote();
    stale();
    const seq = model.get("seq");
    root.dataset.seq = String(seq);
    root.dataset.drawMs = drawMs.toFixed(2);
    const timing = model.get("timing") || {};
    const entry = {
      seq,
      edited: timing.edited,
      started: timing.started,
      cooked: timing.cooked,
      sent: model.get("sent_ms"),
      cook: model.get("cook_ms"),
      recv,
      drawn: now(),
      draw: drawMs,
    };
    requestAnimationFrame(() => {
      entry.painted = now(); // the frame that shows the new picture
    });
    // the last draws of this view, with their timings (benchmarks/browser_latency.py)
    (root.__procgenDraws = root.__procgenDraws || []).push(entry);
    if (root.__procgenDraws.length > 1000) root.__procgenDraws.shift();
  }

  function envAt(ev) {
    if (!cells || !data) return -1;
    const r = canvas.getBoundingClientRect();
    const x = ev.clientX - r.left, y = ev.clientY - r.top;
    const c = Math.floor(x / cells.cell), row = Math.floor(y / cells.cell);
    if (c < 0 || c >= cells.cols || row < 0) return -1;
    const e = row * cells.cols + c;
    return e < data.shown ? e : -1;
  }

  function tipFor(e) {
    const m = data.metrics;
    const ok = data.valid[e] !== 0;
    const lines = [
      `<b>env ${e}</b> · <span style="color:${ok ? VALID : INVALID}">${ok ? "valid" : "invalid"}</span>`,
    ];
    if (!ok && data.reasons[e]) lines.push(`why: ${reasonText(data.reasons[e])}`);
    if (m.length < (e + 1) * 3) lines.push("<i>measuring…</i>");
    else {
      lines.push(`length ${fmt(m[e * 3])}`);
      lines.push(`smallest turn radius ${fmt(m[e * 3 + 1])}`);
      lines.push(`clearance ${fmt(m[e * 3 + 2])}`);
    }
    if (data.G) lines.push(`gates ${Math.min(data.gateCount[e] || 0, data.G)}`);
    if (data.racing) lines.push(`<span class="pc-lap">lap time ${fmt(data.racing.lap[e], 4)} s</span>`);
    return lines.join("<br>");
  }

  canvas.addEventListener("mousemove", (ev) => {
    if (drag) {
      zoom.px += ev.clientX - drag.x;
      zoom.py += ev.clientY - drag.y;
      drag = { x: ev.clientX, y: ev.clientY };
      draw();
      return;
    }
    const e = zoom ? zoom.env : envAt(ev);
    if (e < 0) { tip.style.display = "none"; return; }
    askMetrics();
    tip.innerHTML = tipFor(e);
    tip.style.display = "block";
    const r = wrap.getBoundingClientRect();
    let x = ev.clientX - r.left + 14, y = ev.clientY - r.top + 14;
    if (x + 200 > r.width) x = Math.max(0, x - 230);
    tip.style.left = `${x}px`;
    tip.style.top = `${y}px`;
    tip.dataset.env = String(e);
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; drag = null; });
  canvas.addEventListener("mousedown", (ev) => {
    if (zoom) drag = { x: ev.clientX, y: ev.clientY, moved: false };
  });
  canvas.addEventListener("mouseup", () => { drag = null; });
  canvas.addEventListener("click", (ev) => {
    if (zoom) return;
    const e = envAt(ev);
    if (e < 0) return;
    zoom = { env: e, scale: 1, px: 0, py: 0 };
    root.dataset.zoomed = String(e);
    model.send({ type: "select", env: e }); // view.selected: its seed, epoch and code
    tip.style.display = "none";
    draw();
    canvas.focus();
  });
  canvas.addEventListener("wheel", (ev) => {
    if (!zoom) return;
    ev.preventDefault();
    const f = ev.deltaY < 0 ? 1.2 : 1 / 1.2;
    const r = canvas.getBoundingClientRect();
    const mx = ev.clientX - r.left - r.width / 2, my = ev.clientY - r.top - r.height / 2;
    zoom.px = mx - (mx - zoom.px) * f;
    zoom.py = my - (my - zoom.py) * f;
    zoom.scale *= f;
    draw();
  }, { passive: false });
  const leave = () => {
    zoom = null;
    drag = null;
    delete root.dataset.zoomed;
    draw();
  };
  // Escape wherever the focus is in the view (a slider, a text box, the canvas): the
  // controls stop keydown from bubbling, so it is caught on its way down
  const escape = (ev) => {
    if (ev.key !== "Escape" || !zoom) return;
    const around = root.closest(".procgen-explore") || root;
    if (around.contains(ev.target) || ev.target === document.body) {
      ev.stopPropagation();
      leave();
    }
  };
  document.addEventListener("keydown", escape, true);
  back.addEventListener("click", leave);
  bars.addEventListener("change", showCounts);

  // the picture stays in view while the form beside (or under) it scrolls: JupyterLab's
  // output area clips overflow, which turns CSS position: sticky off, so the picture
  // column is shifted down by hand, within its view, as the notebook scrolls
  // (looked up once the canvas is in the page: render runs before it is attached)
  let picture = null;
  let view = null;
  // the notebook's scroller: the nearest ancestor that scrolls (an output area that may
  // scroll but has nothing to scroll is passed over: its top is not the notebook's)
  const scrollerOf = (node) => {
    for (let p = node && node.parentElement; p; p = p.parentElement) {
      const oy = getComputedStyle(p).overflowY;
      if ((oy === "auto" || oy === "scroll") && p.scrollHeight > p.clientHeight + 1) return p;
    }
    return null;
  };
  let scroller = null;
  let stickQueued = false;
  // narrow (the picture above the form): the picture box takes at most NARROW_SHARE of
  // the notebook's visible height, measured from its scroller's top (the rest scrolls
  // inside the box), so the form below it keeps most of the height and every control
  // can be scrolled to where nothing covers it
  const fitNarrow = (top) => {
    const narrow = getComputedStyle(picture).order === "-1";
    const bottom = Math.min(window.innerHeight, scroller ? scroller.getBoundingClientRect().bottom : Infinity);
    const limit = narrow ? Math.max(160, Math.floor(NARROW_SHARE * (bottom - top))) : Infinity;
    const maxH = narrow ? `${limit}px` : "";
    if (picture.style.maxHeight !== maxH) {
      picture.style.maxHeight = maxH;
      picture.style.overflowY = narrow ? "auto" : "";
    }
    root.dataset.narrow = narrow ? String(limit) : "";
    const cap = narrow ? Math.max(100, limit - head.offsetHeight - 12) : Infinity;
    if (cap !== heightCap) {
      heightCap = cap;
      if (data) draw();
    }
  };
  const stick = () => {
    stickQueued = false;
    if (!picture || !view) return;
    const top = scroller ? Math.max(0, scroller.getBoundingClientRect().top) : 0;
    fitNarrow(top);
    const shift = Number(picture.dataset.shift || 0);
    const r = picture.getBoundingClientRect();
    const v = view.getBoundingClientRect();
    const natural = r.top - shift;
    const want = Math.max(0, Math.min(top - natural, v.bottom - natural - r.height));
    if (Math.abs(want - shift) < 0.5) return;
    picture.style.transform = want > 0 ? `translateY(${want}px)` : "";
    picture.dataset.shift = String(want);
  };
  const queueStick = () => {
    if (!stickQueued) { stickQueued = true; requestAnimationFrame(stick); }
  };
  const follow = () => {
    picture = root.closest(".procgen-picture");
    view = root.closest(".procgen-explore");
    if (!view) return;
    scroller = scrollerOf(view);
  };
  // any scroll in the page (scroll events do not bubble: caught on their way down)
  const onScroll = () => { if (!view) follow(); queueStick(); };
  document.addEventListener("scroll", onScroll, { capture: true, passive: true });
  setTimeout(() => { follow(); queueStick(); }, 0);
  window.addEventListener("resize", queueStick);

  const ro = new ResizeObserver(() => { if (data) draw(); follow(); queueStick(); });
  ro.observe(wrap);
  let asked = 0; // the picture whose metrics were asked for
  const metrics = () => {
    if (data && model.get("metrics_seq") === model.get("seq")) {
      data.metrics = f32(model.get("metrics"));
      root.dataset.metricsSeq = String(model.get("metrics_seq"));
      if (tip.style.display === "block" && tip.dataset.env) {
        tip.innerHTML = tipFor(Number(tip.dataset.env));
      }
    }
  };
  const askMetrics = () => {
    const seq = model.get("seq");
    if (seq > 0 && asked !== seq && model.get("metrics_seq") !== seq) {
      asked = seq;
      model.send({ type: "metrics", seq });
    }
  };
  // whether the picture can be seen: the kernel polls live state (cpu.read digests) only then
  // (one id per view: a widget displayed twice is seen while either view is)
  const viewId = Math.random().toString(36).slice(2);
  let told = null;
  let inView = true;
  const tell = () => {
    const visible = inView && !document.hidden;
    if (visible !== told) {
      told = visible;
      model.send({ type: "visibility", visible, view: viewId });
    }
  };
  const io = typeof IntersectionObserver === "function"
    ? new IntersectionObserver((entries) => {
        inView = entries.some((e) => e.isIntersecting);
        tell();
      })
    : null;
  if (io) io.observe(root);
  document.addEventListener("visibilitychange", tell);
  model.on("change:seq", update);
  model.on("change:metrics_seq", metrics);
  model.on("change:stale", stale);
  model.on("change:message", stale);
  const repin = () => { read(); draw(); showCounts(); };
  model.on("change:pin_tracks", repin);
  model.on("change:pin_counts", repin);
  model.on("change:racing_on", repin);
  if (model.get("seq") > 0) update();
  else { read(); draw(); showCounts(); stale(); }
  return () => {
    ro.disconnect();
    if (io) io.disconnect();
    document.removeEventListener("visibilitychange", tell);
    document.removeEventListener("keydown", escape, true);
    window.removeEventListener("resize", queueStick);
    document.removeEventListener("scroll", onScroll, { capture: true });
    model.off("change:pin_tracks", repin);
    model.off("change:pin_counts", repin);
    model.off("change:racing_on", repin);
    if (told !== false) model.send({ type: "visibility", visible: false, view: viewId });
    model.off("change:seq", update);
    model.off("change:metrics_seq", metrics);
    model.off("change:stale", stale);
    model.off("change:message", stale);
  };
}

export default { render };
