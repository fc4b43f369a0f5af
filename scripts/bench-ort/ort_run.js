// ONNX Runtime's side of scripts/bench-ort.sh (a developer tool, not part of the tests). Node 20, CommonJS.
// Loads onnxruntime-node from the module path the shell script sets up (NODE_PATH in its temp folder).
//
//   node ort_run.js info
//       one JSON line: ORT's version, the threads it will be given, the bundled native files it found
//   node ort_run.js check --model M.onnx --data DIR --expect mha_out|gqa_out --threads N --tol 1e-4
//       runs M on DIR/x.npy and prints {"max_abs_diff": d} against DIR/<expect>.npy; exits 3 when d is
//       above --tol (or NaN), 1 when ORT cannot load or run the model
//   node ort_run.js time --model M.onnx --batch B --tokens T --dim C --threads N [--repeats 5] [--seed 1]
//       one warm-up run then --repeats timed runs on random x; prints {"median_s", "times_s"}
//
// Every model has the one input "x" (B, T, C) and the one output "y" (B, T, C), float32.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

function die(msg) {
  process.stderr.write(`bench-ort: ${msg}\n`);
  process.exit(1);
}

function args(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) die(`ort_run.js: bad arguments near '${argv[i]}'`);
    out[argv[i].slice(2)] = argv[i + 1];
  }
  return out;
}

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    die(`require('onnxruntime-node') failed: ${String(e.message).split('\n')[0]}`);
  }
}

// A float32, C-order .npy (format 1.0 to 3.0), as the dump and graphs.py write them.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') die(`${file} is not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12);
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || descr[1] !== '<f4') die(`${file}: want little-endian float32, found ${descr && descr[1]}`);
  if (!fortran || fortran[1] !== 'False') die(`${file}: want C order`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const n = dims.reduce((a, b) => a * b, 1);
  const off = start + headerLen;
  // Copy out: the data offset need not be 4-byte aligned within Node's pooled Buffer.
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = buf.readFloatLE(off + 4 * i);
  return { dims, data };
}

// mulberry32: a small seeded generator, so every round and every variant sees the same x.
function uniform(n, seed) {
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  return out;
}

async function session(ort, model, threads) {
  try {
    return await ort.InferenceSession.create(model, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
    });
  } catch (e) {
    die(`ORT could not load ${path.basename(model)}: ${String(e.message).split('\n')[0]}`);
  }
}

async function run(sess, x) {
  try {
    return (await sess.run({ x })).y;
  } catch (e) {
    die(`ORT failed running the model: ${String(e.message).split('\n')[0]}`);
  }
}

async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  const a = args(rest);
  const threads = Number(a.threads || os.cpus().length);
  if (cmd === 'info') {
    // The CPU binaries ship inside the npm package (bin/napi-v6/<platform>/<arch>); its post-install
    // script only fetches the CUDA ones, so skipping it loses nothing. Look before require() so that a
    // missing file gets this message rather than a dlopen error.
    let dir;
    try {
      dir = path.join(path.dirname(require.resolve('onnxruntime-node/package.json')), 'bin', 'napi-v6',
        process.platform, process.arch);
    } catch (e) {
      die('onnxruntime-node is not installed where NODE_PATH points');
    }
    const files = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
    const lib = process.platform === 'linux' ? 'libonnxruntime.so.1' : null;
    if (!files.includes('onnxruntime_binding.node') || (lib && !files.includes(lib))) {
      die(`onnxruntime-node ships no CPU binaries for ${process.platform}/${process.arch} (looked in ${dir})`);
    }
    const ort = loadOrt();
    console.log(JSON.stringify({ version: ort.env.versions.node, threads, cpus: os.cpus().length, binaries: files }));
    return;
  }
  const ort = loadOrt();
  if (cmd === 'check') {
    const x = readNpy(path.join(a.data, 'x.npy'));
    const ref = readNpy(path.join(a.data, `${a.expect}.npy`));
    const sess = await session(ort, a.model, threads);
    const y = await run(sess, new ort.Tensor('float32', x.data, x.dims));
    if (y.dims.join(',') !== ref.dims.join(',')) die(`output is (${y.dims}), the reference (${ref.dims})`);
    let d = 0;
    for (let i = 0; i < ref.data.length; i++) {
      const e = Math.abs(y.data[i] - ref.data[i]);
      if (Number.isNaN(e)) { d = NaN; break; } // a NaN anywhere fails the check
      if (e > d) d = e;
    }
    // max_abs_diff is null in JSON for a NaN; "shown" is what the shell script prints.
    console.log(JSON.stringify({ max_abs_diff: d, shown: Number.isNaN(d) ? 'NaN' : d.toExponential(1) }));
    if (!(d <= Number(a.tol))) process.exit(3);
  } else if (cmd === 'time') {
    const dims = [Number(a.batch), Number(a.tokens), Number(a.dim)];
    const repeats = Number(a.repeats || 5);
    const x = new ort.Tensor('float32', uniform(dims[0] * dims[1] * dims[2], Number(a.seed || 1)), dims);
    const sess = await session(ort, a.model, threads);
    await run(sess, x); // warm-up: first-run allocations and kernel selection
    const times = [];
    for (let i = 0; i < repeats; i++) {
      const t0 = process.hrtime.bigint();
      await run(sess, x);
      times.push(Number(process.hrtime.bigint() - t0) / 1e9);
    }
    const s = [...times].sort((p, q) => p - q);
    const m = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    console.log(JSON.stringify({ median_s: m, times_s: times }));
  } else {
    die(`ort_run.js: unknown command '${cmd}' (info, check, time)`);
  }
}

main();
