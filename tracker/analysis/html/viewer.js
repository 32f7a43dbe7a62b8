// The viewer of 'tracker report --html' pages: poses meshes from the poses Python computed
// (tracker/analysis/html_scene.py); nothing is simulated here. World axes: Z up, metres.
// URL fragment: #t=SECONDS (show that time, paused) & run=NAME & ghost=overlay|beside|off & follow=0 & play=1.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const SIM_COLOUR = 0xed7326, GHOST_COLOUR = 0x4dcc66, CONTACT_COLOUR = 0xff3355, PUSH_COLOUR = 0x33aaff;
const GHOST_BESIDE = new THREE.Vector3(0, 1.2, 0);  // as in the MP4: the reference 1.2 m to the character's left
const CONTACT_SHOWN_S = 0.3;  // a contact marker stays this long after the contact
const $ = (id) => document.getElementById(id);
const runs = JSON.parse($('runs').textContent);

function f32(b64) {
  const bin = atob(b64), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}

// -- renderer, camera, ground -----------------------------------------------------------------
const canvas = $('view');
const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
const world = new THREE.Scene();
world.background = new THREE.Color(0x2a2f38);
const camera = new THREE.PerspectiveCamera(45, 1, 0.05, 200);
camera.up.set(0, 0, 1);
const controls = new OrbitControls(camera, canvas);
controls.enableDamping = false;
world.add(new THREE.HemisphereLight(0xffffff, 0x444450, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 1.8);
sun.position.set(2, 1, 3);
world.add(sun);
const grid = groundGrid(15, 0.5);
world.add(grid);

function groundGrid(half, step) {  // short segments: SwiftShader drops long lines that cross the view's edges
  const xyz = [], rgb = [], minor = new THREE.Color(0x59606b), axis = new THREE.Color(0x9aa3b0);
  for (let a = -half; a <= half + 1e-9; a += step) {
    const c = Math.abs(a) < 1e-9 ? axis : minor;
    for (let b = -half; b < half - 1e-9; b += step) {
      xyz.push(a, b, 0, a, b + step, 0, b, a, 0, b + step, a, 0);
      for (let k = 0; k < 4; k++) rgb.push(c.r, c.g, c.b);
    }
  }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.Float32BufferAttribute(xyz, 3));
  g.setAttribute('color', new THREE.Float32BufferAttribute(rgb, 3));
  return new THREE.LineSegments(g, new THREE.LineBasicMaterial({ vertexColors: true }));
}

// -- one run's meshes ---------------------------------------------------------------------------
function shapeGeometry(s) {
  let g;
  if (s.kind === 'box') g = new THREE.BoxGeometry(s.size[0], s.size[1], s.size[2]);
  else if (s.kind === 'sphere') g = new THREE.SphereGeometry(s.size[0], 20, 14);
  else if (s.kind === 'capsule') g = new THREE.CapsuleGeometry(s.size[0], s.size[1], 6, 16).rotateX(Math.PI / 2);
  else g = new THREE.CylinderGeometry(s.size[0], s.size[0], s.size[1], 20).rotateX(Math.PI / 2);
  return g;  // capsules and cylinders lie along three's Y; URDF's along Z
}

function makeBody(data, material) {
  const group = new THREE.Group();
  const links = data.links.map(() => { const l = new THREE.Group(); group.add(l); return l; });
  for (const s of data.shapes) {
    const mesh = new THREE.Mesh(shapeGeometry(s), material);
    mesh.position.fromArray(s.pos);
    mesh.quaternion.fromArray(s.quat);
    links[s.link].add(mesh);
  }
  return { group, links };
}

function arrow(colour) {
  const a = new THREE.ArrowHelper(new THREE.Vector3(1, 0, 0), new THREE.Vector3(), 0.3, colour, 0.08, 0.05);
  a.visible = false;
  return a;
}

class RunView {
  constructor(data) {
    this.data = data;
    this.t = f32(data.t);
    this.sim = f32(data.sim);
    this.ref = data.ref ? f32(data.ref) : null;
    this.L = data.links.length;
    this.root = new THREE.Group();
    this.body = makeBody(data, new THREE.MeshStandardMaterial({ color: SIM_COLOUR, roughness: 0.55 }));
    this.root.add(this.body.group);
    if (this.ref) {
      this.ghost = makeBody(data, new THREE.MeshStandardMaterial({ color: GHOST_COLOUR, roughness: 0.8,
        transparent: true, opacity: 0.28, depthWrite: false, depthFunc: THREE.LessDepth }));  // not over an equal pose
      this.root.add(this.ghost.group);
    }
    const b = data.balls;
    this.ballPos = b.count ? f32(b.pos) : null;
    this.balls = [];
    for (let k = 0; k < b.count; k++) {
      const m = new THREE.Mesh(new THREE.SphereGeometry(b.radius[k], 24, 16),
        new THREE.MeshStandardMaterial({ color: new THREE.Color(...b.colour[k]), roughness: 0.5 }));
      this.root.add(m);
      this.balls.push(m);
    }
    const dot = new THREE.SphereGeometry(0.025, 12, 8), red = new THREE.MeshBasicMaterial({ color: CONTACT_COLOUR });
    this.contacts = data.contacts.map((c) => {
      const m = new THREE.Mesh(dot, red);
      m.position.fromArray(c.pos);
      const a = arrow(CONTACT_COLOUR);
      this.root.add(m, a);
      return { c, m, a };
    });
    this.pushes = data.pushes.map((p) => { const a = arrow(PUSH_COLOUR); this.root.add(a); return { p, a }; });
    world.add(this.root);
  }

  get start() { return this.t[0]; }
  get end() { return this.t[this.t.length - 1]; }

  frameAt(time) {  // the row nearest to time
    const t = this.t;
    let lo = 0, hi = t.length - 1;
    while (hi - lo > 1) { const mid = (lo + hi) >> 1; if (t[mid] <= time) lo = mid; else hi = mid; }
    return Math.abs(t[hi] - time) < Math.abs(t[lo] - time) ? hi : lo;
  }

  pose(body, poses, f, shift) {
    for (let k = 0; k < this.L; k++) {
      const o = (f * this.L + k) * 7;
      body.links[k].position.set(poses[o] + shift.x, poses[o + 1] + shift.y, poses[o + 2] + shift.z);
      body.links[k].quaternion.set(poses[o + 3], poses[o + 4], poses[o + 5], poses[o + 6]);
    }
  }

  show(time, ghostMode) {
    const f = this.frameAt(time), now = this.t[f];
    this.pose(this.body, this.sim, f, new THREE.Vector3());
    if (this.ghost) {
      this.ghost.group.visible = ghostMode !== 'off';
      this.pose(this.ghost, this.ref, f, ghostMode === 'beside' ? GHOST_BESIDE : new THREE.Vector3());
    }
    this.balls.forEach((m, k) => {
      const o = (f * this.balls.length + k) * 3, p = this.ballPos;
      m.visible = Number.isFinite(p[o]);
      if (m.visible) m.position.set(p[o], p[o + 1], p[o + 2]);
    });
    for (const { c, m, a } of this.contacts) {
      const on = now >= c.t - 1e-6 && now < c.t + CONTACT_SHOWN_S;
      m.visible = on;
      a.visible = on && !!c.impulse;
      if (a.visible) {
        const j = new THREE.Vector3(...c.impulse), n = j.length();
        a.position.fromArray(c.pos);
        a.setDirection(j.clone().normalize());
        a.setLength(Math.min(0.1 + 0.1 * n, 0.8), 0.08, 0.05);
      }
    }
    for (const { p, a } of this.pushes) {
      a.visible = now >= p.t - 1e-6 && now <= p.until + 1e-6;
      if (a.visible) {
        const o = (f * this.L + p.link) * 7, at = new THREE.Vector3(this.sim[o], this.sim[o + 1], this.sim[o + 2]);
        const d = new THREE.Vector3(...p.force), len = Math.min(0.2 + d.length() / 500, 1.0);
        d.normalize();
        a.position.copy(at.clone().addScaledVector(d, -len));
        a.setDirection(d);
        a.setLength(len, 0.1, 0.06);
      }
    }
    return f;
  }

  rootAt(f) { const o = f * this.L * 7; return new THREE.Vector3(this.sim[o], this.sim[o + 1], this.sim[o + 2]); }

  dispose() {
    world.remove(this.root);
    this.root.traverse((o) => { if (o.geometry) o.geometry.dispose(); if (o.material) o.material.dispose(); });
  }
}

// -- playback and controls ----------------------------------------------------------------------
const state = { view: null, run: -1, time: 0, playing: true, speed: 1, ghost: 'overlay', follow: true, last: null };
const slider = $('slider'), playBtn = $('play');

function setPlaying(on) { state.playing = on; playBtn.textContent = on ? 'Pause' : 'Play'; }

function aim(view) {
  const r = view.rootAt(view.frameAt(state.time));
  controls.target.set(r.x, r.y, 0.9);
  camera.position.set(r.x + 3.0, r.y + 2.1, 1.7);
  state.last = r;
  controls.update();
}

function selectRun(k) {
  if (k === state.run) return;
  state.run = k;
  if (state.view) { state.view.dispose(); state.view = null; }
  const entry = runs[k];
  $('side').replaceChildren($('panel-' + k).content.cloneNode(true));
  $('run').value = String(k);
  document.querySelectorAll('#sweep-table tbody tr').forEach((tr) => tr.classList.toggle('selected', tr.dataset.run === String(k)));
  const note = $('note');
  if (!entry.scene) {
    note.textContent = `${entry.name}: nothing to replay (${entry.note || 'no recording'})`;
    note.style.display = 'flex';
    return;
  }
  note.style.display = 'none';
  state.view = new RunView(JSON.parse($(entry.scene).textContent));
  const balls = state.view.data.balls;
  if (balls.count) $('ball-swatch').style.background = new THREE.Color(...balls.colour[0]).getStyle();
  slider.min = state.view.start;
  slider.max = state.view.end;
  slider.step = 1 / state.view.data.fps;
  state.time = Math.min(Math.max(state.time, state.view.start), state.view.end);
  const r0 = state.view.rootAt(0);
  grid.position.set(Math.round(r0.x), Math.round(r0.y), 0);
  aim(state.view);
}

function readHash() {
  const h = new URLSearchParams(location.hash.replace(/^#/, ''));
  if (h.has('run')) {
    const k = runs.findIndex((r) => r.name === h.get('run'));
    if (k >= 0) selectRun(k);
  }
  if (h.has('ghost')) { state.ghost = h.get('ghost'); $('ghost').value = state.ghost; }
  if (h.has('follow')) { state.follow = h.get('follow') !== '0'; $('follow').checked = state.follow; }
  if (h.has('speed')) { state.speed = Number(h.get('speed')) || 1; }
  if (h.has('t') && Number.isFinite(Number(h.get('t')))) {
    state.time = Number(h.get('t'));
    setPlaying(h.get('play') === '1');
    if (state.view) aim(state.view);
  }
}

function draw() {
  const view = state.view, clock = $('clock');
  if (!view) { clock.textContent = ''; renderer.render(world, camera); return; }
  const f = view.show(state.time, state.ghost);
  if (state.follow) {  // the camera keeps its offset from the character's root, over the ground
    const r = view.rootAt(f), d = r.clone().sub(state.last || r);
    d.z = 0;
    camera.position.add(d);
    controls.target.add(d);
    state.last = r;
  }
  controls.update();
  slider.value = state.time;
  const t = view.t[f];
  clock.textContent = `t = ${t.toFixed(3)} s`;
  $('readout').textContent = `${t.toFixed(3)} / ${view.end.toFixed(3)} s  frame ${f + 1}/${view.t.length}` +
    (view.data.status !== 'ok' ? `  (run ${view.data.status}${view.data.message ? ': ' + view.data.message : ''})` : '');
  document.body.dataset.time = t.toFixed(4);
  renderer.render(world, camera);
}

function resize() {
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (!w || !h) return;
  renderer.setSize(w, h, false);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
}

let before = null;
function tick(now) {
  const dt = before === null ? 0 : Math.min((now - before) / 1000, 0.1);
  before = now;
  const view = state.view;
  if (view && state.playing) {
    state.time += dt * state.speed;
    if (state.time > view.end) state.time = view.start;
  }
  draw();
  requestAnimationFrame(tick);
}

playBtn.onclick = () => setPlaying(!state.playing);
slider.oninput = () => { state.time = Number(slider.value); setPlaying(false); };
$('speed').onchange = (e) => { state.speed = Number(e.target.value); };
$('ghost').onchange = (e) => { state.ghost = e.target.value; };
$('follow').onchange = (e) => { state.follow = e.target.checked; if (state.view) state.last = state.view.rootAt(state.view.frameAt(state.time)); };
$('run').onchange = (e) => selectRun(Number(e.target.value));
document.querySelectorAll('#sweep-table tbody tr').forEach((tr) => { tr.onclick = () => selectRun(Number(tr.dataset.run)); });
window.addEventListener('hashchange', readHash);
new ResizeObserver(resize).observe(canvas);
window.addEventListener('keydown', (e) => { if (e.key === ' ' && e.target === document.body) { e.preventDefault(); setPlaying(!state.playing); } });

runs.forEach((r, k) => $('run').add(new Option(r.name + (r.scene ? '' : ' (no recording)'), String(k))));
$('runpick').hidden = runs.length < 2;
resize();
const first = runs.findIndex((r) => r.scene);
selectRun(first >= 0 ? first : 0);
readHash();
draw();
document.body.dataset.ready = '1';
requestAnimationFrame(tick);
