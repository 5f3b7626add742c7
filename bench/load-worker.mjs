import { parentPort, workerData } from "node:worker_threads";
import autocannon from "autocannon";

/**
 * Runs one autocannon load on a worker thread, so that the gateway's event loop in the main thread
 * only serves requests. workerData: { url, method, headers, body, connections, duration, paths }
 * (paths: when given, the requests go to each of them in turn, on the url's origin).
 * Posts { requests, rps, non2xx, errors } (rps: requests per second answered with 2xx).
 */
const { url, method = "GET", headers = {}, body, connections = 10, duration = 5, paths } = workerData;
let turn = 0;
const rotate = paths?.length ? { requests: [{ setupRequest: (request) => ({ ...request, path: paths[turn++ % paths.length] }) }] } : {};
try {
  const result = await autocannon({ url, method, headers, ...(body ? { body } : {}), connections, duration, ...rotate });
  parentPort.postMessage({
    requests: result.requests.total,
    rps: result["2xx"] / (result.duration || duration),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  });
} catch (err) {
  parentPort.postMessage({ error: String(err) });
}
