// ui_topology.mjs - how long the topology page takes to render a 5,000-node cluster in
// headless chromium. Usage: node bench/ui_topology.mjs URL [--nodes N] [--runs R]
// (bench/ui_topology.sh starts musterd and calls this). Loads N nodes (spines of 25 blocks of
// 25 nodes, 8 GPUs each) and gangs of 8 GPU pods filling about 60% of the GPUs, runs cycles,
// then times: navigation -> the cluster map (one cell per node) and the tree in the DOM;
// recolouring by another resource (the map and tree redrawn from data in memory); selecting
// a job (highlight + reveal); one poll re-render. Prints medians over R page loads.
import { launch, newPage } from '../tests/ui/browser.mjs';

const args = process.argv.slice(2);
const URL = args[0];
const opt = (k, d) => { const i = args.indexOf(k); return i > 0 ? Number(args[i + 1]) : d; };
const NODES = opt('--nodes', 5000), RUNS = opt('--runs', 5);
if (!URL) { console.error('usage: node bench/ui_topology.mjs URL [--nodes N] [--runs R]'); process.exit(2); }

async function post(path, body, type = 'application/json') {
  const res = await fetch(URL + path, { method: 'POST', headers: { 'Content-Type': type }, body });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

function cluster() {
  const docs = [{ apiVersion: 'scheduling.koordinator.sh/v1alpha1', kind: 'ClusterNetworkTopology',
    metadata: { name: 'default' }, spec: { networkTopologySpec: [
      { topologyLayer: 'SpineLayer', labelKey: ['network.topology.nvidia.com/spine'] },
      { topologyLayer: 'BlockLayer', parentTopologyLayer: 'SpineLayer',
        labelKey: ['network.topology.nvidia.com/block'] },
      { topologyLayer: 'NodeTopologyLayer', parentTopologyLayer: 'BlockLayer' }] } }];
  for (let i = 0; i < NODES; i++) {
    const block = Math.floor(i / 25), spine = Math.floor(block / 25);
    docs.push({ apiVersion: 'v1', kind: 'Node', metadata: { name: `n-${i}`, labels: {
      'network.topology.nvidia.com/spine': `spine-${spine}`,
      'network.topology.nvidia.com/block': `block-${block}` } },
    status: { allocatable: { cpu: '96', memory: '1536Gi', pods: '110', 'nvidia.com/gpu': '8' } } });
  }
  return docs;
}

function gangs(from, count) {
  const docs = [];
  for (let g = from; g < from + count; g++) {
    docs.push({ apiVersion: 'scheduling.sigs.k8s.io/v1alpha1', kind: 'PodGroup',
      metadata: { name: `g${g}`, namespace: 'bench' }, spec: { minMember: 8 } });
    for (let p = 0; p < 8; p++)
      docs.push({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `g${g}-${p}`, namespace: 'bench',
        labels: { 'pod-group.scheduling.sigs.k8s.io': `g${g}` } },
      spec: { priority: g % 3, containers: [{ name: 'm', image: 'x',
        resources: { requests: { cpu: '8', memory: '64Gi', 'nvidia.com/gpu': '4' } } }] } });
  }
  return docs;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  let t = Date.now();
  await post('/api/v1/manifests', JSON.stringify(cluster()));
  const G = Math.floor((NODES * 2 * 0.6) / 8); // 2 pods per node, 60% of the GPUs
  for (let g = 0; g < G; g += 250) {
    await post('/api/v1/manifests', JSON.stringify(gangs(g, Math.min(250, G - g))));
    await post('/api/v1/cycles', '');
  }
  await post('/api/v1/cycles', '');
  const topoBytes = (await (await fetch(URL + '/api/v1/topology?pod_gpu=1')).arrayBuffer()).byteLength;
  console.log(`loaded ${NODES} nodes, ${G} gangs of 8 in ${Date.now() - t} ms; ` +
    `GET /api/v1/topology is ${(topoBytes / 1e6).toFixed(2)} MB`);

  const b = await launch();
  const first = [], select = [], poll = [], recolour = [];
  let fetchMs = 0;
  try {
    for (let r = 0; r < RUNS; r++) {
      const page = await newPage(b.browser);
      await page.goto(URL + '/#/topology');
      await page.waitForFunction((n) => document.querySelectorAll('#topo-map .cell').length === n &&
        document.querySelector('.tree li[data-domain]'), NODES, { timeout: 60000, polling: 'raf' });
      first.push(await page.evaluate(() => performance.now()));
      // the whole draw (map + tree) timed inside the page, from the select's change event
      recolour.push(await page.evaluate(() => {
        const sel = document.querySelector('#topo-color');
        const t0 = performance.now();
        sel.value = 'cpu';
        sel.dispatchEvent(new Event('change'));
        void document.body.offsetHeight; // style and layout of the new cells included
        return performance.now() - t0;
      }));
      if (r === 0) fetchMs = await page.evaluate(() => performance.getEntriesByType('resource')
        .filter((e) => /\/api\/v1\/topology\?/.test(e.name)).map((e) => e.duration)[0] || 0);
      t = Date.now();
      await page.selectOption('#topo-job', 'bench/g7');
      await page.waitForSelector('.tree li.node.hl .occ', { timeout: 60000 });
      select.push(Date.now() - t);
      t = Date.now();
      const before = await page.evaluate(() => document.body.dataset.updated);
      await page.click('#refresh');
      await page.waitForFunction((v) => document.body.dataset.updated !== v, before);
      poll.push(Date.now() - t);
      const errs = page.errors;
      if (errs.length) console.log('page errors:', errs.slice(0, 3));
      await page.close();
    }
  } finally {
    await b.close();
  }
  const f = (xs) => `median ${median(xs).toFixed(0)} ms (runs: ${xs.map((x) => x.toFixed(0)).join(', ')})`;
  console.log(`topology first render (navigation start -> map of ${NODES} cells and tree in DOM): ${f(first)}`);
  console.log(`redraw map + tree (recolour by cpu: script, style and layout): ${f(recolour)}`);
  console.log(`  of which GET /api/v1/topology took ${fetchMs.toFixed(0)} ms in the first run`);
  console.log(`select a job (highlight + open its domains): ${f(select)}`);
  console.log(`refresh (re-fetch topology, jobs, listed nodes; re-render): ${f(poll)}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
