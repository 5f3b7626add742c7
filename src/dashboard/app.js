// Live event dashboard: REST for the recent events and an event's trace, graphql-ws for new events,
// uPlot for the chart of events per minute. The token (sessionStorage), the integration and the
// filters (the address's query string) survive a reload, which reconnects by itself.
(() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    token: "",
    integration: "",
    events: new Map(),
    order: [],
    client: null,
    unsubscribe: null,
    selected: null,
    types: new Set(),
    everConnected: false,
  };
  const query = new URLSearchParams(location.search);

  // Bottom to top of the chart's stacks; colors of the status badges.
  const STATUSES = ["success", "pending", "failed", "skipped"];
  const COLORS = { success: "#2f9e55", pending: "#e0a800", failed: "#d93025", skipped: "#9ca3af" };
  const WINDOW_MINUTES = 60;

  const stored = {
    get(key) {
      try {
        return sessionStorage.getItem(key) || "";
      } catch (_) {
        return "";
      } // storage may be off
    },
    set(key, value) {
      try {
        value ? sessionStorage.setItem(key, value) : sessionStorage.removeItem(key);
      } catch (_) {
        /* storage may be off */
      }
    },
  };

  function showError(message) {
    $("error").textContent = message || "";
  }

  async function api(path) {
    const res = await fetch(path, { headers: { authorization: "Bearer " + state.token } });
    const body = res.status === 204 ? null : await res.json();
    if (!res.ok) throw new Error((body && body.error && body.error.message) || "HTTP " + res.status);
    return body;
  }

  function setLive(on, text) {
    const el = $("live");
    el.className = on ? "on" : "off";
    el.textContent = "● " + text;
  }

  /** Keeps the integration and the filters in the address, so a reload (or a shared link) shows the same. */
  function saveView() {
    const params = new URLSearchParams();
    if (state.integration) params.set("integration", state.integration);
    if ($("type-filter").value) params.set("type", $("type-filter").value);
    if ($("status-filter").value) params.set("status", $("status-filter").value);
    const qs = params.toString();
    history.replaceState(null, "", location.pathname + (qs ? "?" + qs : ""));
    stored.set("dashboard-integration", state.integration);
  }

  function matches(event) {
    const type = $("type-filter").value;
    const status = $("status-filter").value;
    return (!type || event.payload.type === type) && (!status || event.status === status);
  }

  function addType(type) {
    if (!type || state.types.has(type)) return;
    state.types.add(type);
    const option = document.createElement("option");
    option.value = option.textContent = type;
    $("type-filter").appendChild(option);
  }

  function cell(text, className) {
    const td = document.createElement("td");
    td.textContent = text == null ? "" : String(text);
    if (className) td.className = className;
    return td;
  }

  function render(newIds) {
    const tbody = document.querySelector("#events tbody");
    tbody.textContent = "";
    let shown = 0;
    let skipped = false;
    for (const id of state.order) {
      const event = state.events.get(id);
      if (!matches(event)) continue;
      shown++;
      if (event.status === "skipped") skipped = true;
      const tr = document.createElement("tr");
      tr.dataset.id = event.id;
      tr.dataset.type = event.payload.type;
      tr.dataset.status = event.status;
      if (newIds && newIds.has(id)) tr.classList.add("new");
      if (state.selected === id) tr.classList.add("selected");
      tr.appendChild(cell(new Date(event.createdAt).toLocaleString()));
      tr.appendChild(cell(event.payload.type));
      const statusCell = cell("");
      const badge = document.createElement("span");
      badge.className = "status status-" + event.status;
      badge.textContent = event.status;
      if (event.status === "skipped")
        badge.title = "Not delivered: development mode is off. Turn it on with PUT /v1/integrations/" + state.integration + "/dev";
      statusCell.appendChild(badge);
      tr.appendChild(statusCell);
      tr.appendChild(cell(event.installationId || "", "id"));
      tr.appendChild(cell(event.id, "id"));
      tr.addEventListener("click", () => openEvent(event.id));
      tbody.appendChild(tr);
    }
    $("no-events").hidden = shown > 0;
    $("skipped-hint").hidden = !skipped;
    for (const el of document.querySelectorAll("#skipped-hint .integration-name")) el.textContent = state.integration || "{name}";
    scheduleChart();
  }

  // ---- Chart: events per minute over the last hour, stacked by status ----

  let chart = null;
  let chartCounts = null;
  let chartPending = false;

  function chartData() {
    const now = Math.floor(Date.now() / 60000);
    const first = now - WINDOW_MINUTES + 1;
    const xs = [];
    for (let m = first; m <= now; m++) xs.push(m * 60);
    const counts = {};
    for (const s of STATUSES) counts[s] = new Array(WINDOW_MINUTES).fill(0);
    for (const event of state.events.values()) {
      const i = Math.floor(Date.parse(event.createdAt) / 60000) - first;
      if (i >= 0 && i < WINDOW_MINUTES && counts[event.status]) counts[event.status][i]++;
    }
    // Each series is its status plus those below it; the tallest is drawn first, the others over it.
    const stacked = [];
    let sum = new Array(WINDOW_MINUTES).fill(0);
    for (const s of STATUSES) {
      sum = sum.map((v, i) => v + counts[s][i]);
      stacked.push(sum);
    }
    return { xs, counts, series: stacked.reverse() };
  }

  function drawChart() {
    chartPending = false;
    const box = $("chart");
    const { xs, counts, series } = chartData();
    chartCounts = counts;
    const totals = {};
    for (const s of STATUSES) totals[s] = counts[s].reduce((a, b) => a + b, 0);
    box.dataset.counts = JSON.stringify(totals);
    box.setAttribute("aria-label", "Events in the last hour: " + STATUSES.map((s) => totals[s] + " " + s).join(", ") + ".");
    if (typeof uPlot === "undefined") return;
    const data = [xs].concat(series);
    if (chart) return chart.setData(data);
    const top = STATUSES.slice().reverse();
    chart = new uPlot(
      {
        width: Math.max(200, box.clientWidth),
        height: 150,
        legend: { show: true },
        cursor: { points: { show: false } },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000], values: (_u, ticks) => ticks.map((v) => String(v)) }],
        series: [{ label: "minute" }].concat(
          top.map((status) => ({
            label: status,
            fill: COLORS[status],
            stroke: COLORS[status],
            width: 0,
            points: { show: false },
            paths: uPlot.paths.bars({ size: [0.8, 24] }),
            // The legend shows the status's own count, not the stacked sum.
            value: (_u, _v, si, i) => (i == null || !chartCounts ? "–" : String(chartCounts[top[si - 1]][i])),
          })),
        ),
      },
      data,
      box,
    );
  }

  function scheduleChart() {
    if (chartPending) return;
    chartPending = true;
    requestAnimationFrame(drawChart);
  }

  // The chart follows its box: the window's width, and the event pane opening beside the table.
  new ResizeObserver(() => {
    const width = Math.max(200, $("chart").clientWidth);
    if (chart && chart.width !== width) chart.setSize({ width, height: 150 });
  }).observe($("chart"));
  setInterval(scheduleChart, 30_000); // the window slides with the clock

  // ---- Events ----

  function upsert(event, fresh) {
    const known = state.events.has(event.id);
    state.events.set(event.id, event);
    if (!known) {
      state.order.unshift(event.id);
      state.order.sort((a, b) => state.events.get(b).createdAt.localeCompare(state.events.get(a).createdAt));
    }
    addType(event.payload.type);
    render(fresh && !known ? new Set([event.id]) : null);
    if (state.selected === event.id) openEvent(event.id);
  }

  function showDetail(shown) {
    $("detail").hidden = !shown;
    document.querySelector("main").classList.toggle("with-detail", shown);
  }

  async function openEvent(id) {
    state.selected = id;
    render();
    try {
      const answer = await api("/v1/integrations/" + encodeURIComponent(state.integration) + "/events/" + encodeURIComponent(id));
      showDetail(true);
      $("detail-title").textContent = answer.event.payload.type + " — " + answer.event.status;
      $("detail-payload").textContent = JSON.stringify(answer.event.payload, null, 2);
      const tbody = document.querySelector("#detail-trace tbody");
      tbody.textContent = "";
      for (const log of answer.trace.logs) {
        const tr = document.createElement("tr");
        tr.appendChild(cell(new Date(log.timestamp).toLocaleTimeString()));
        tr.appendChild(cell(log.level));
        tr.appendChild(cell(log.message));
        tbody.appendChild(tr);
      }
    } catch (err) {
      showError(err.message);
    }
  }

  const EVENT_FIELDS =
    "id integrationId installationId createdAt status payload { eventId type installationId status spaceId revisionId changeRequestId changeRequestStatus commentId replyTo previous { status configuration } }";

  function subscribe() {
    if (state.unsubscribe) state.unsubscribe();
    const name = state.integration;
    state.unsubscribe = state.client.subscribe(
      {
        query: "subscription ($name: String!) { integrationEvents(integrationName: $name) { " + EVENT_FIELDS + " } }",
        variables: { name },
      },
      {
        next: (result) => {
          if (result.errors) return showError(result.errors[0].message);
          if (name === state.integration && result.data) upsert(result.data.integrationEvents, true);
        },
        error: (err) => {
          if (Array.isArray(err)) return showError(err[0].message); // refused, e.g. not a member
          if (err && err.code === 4403) return; // the connection was refused: `closed` said why
          setLive(false, "disconnected");
          showError(err.message || err.reason || "subscription failed");
        },
        complete: () => undefined,
      },
    );
  }

  /** Loads the recent events of the integration (also after a reconnection, for those missed meanwhile). */
  async function loadEvents(name) {
    try {
      const page = await api("/v1/integrations/" + encodeURIComponent(name) + "/events?limit=100");
      if (name !== state.integration) return;
      for (const event of page.items.reverse()) upsert(event, false);
    } catch (err) {
      showError(err.message);
    }
  }

  async function loadIntegration(name) {
    state.integration = name;
    state.events.clear();
    state.order = [];
    state.selected = null;
    showDetail(false);
    saveView();
    render();
    if (!name) return;
    showError("");
    subscribe();
    await loadEvents(name);
  }

  async function connect() {
    state.token = $("token").value.trim();
    showError("");
    if (!state.token) return showError("Type an API token first.");
    stored.set("dashboard-token", state.token);
    if (state.unsubscribe) state.unsubscribe();
    state.unsubscribe = null;
    if (state.client) state.client.dispose();
    state.everConnected = false;
    setLive(false, "connecting…");
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/graphql";
    const client = graphqlWs.createClient({
      url,
      connectionParams: { authorization: "Bearer " + state.token },
      lazy: false,
      retryAttempts: 5,
      // 4403: the token was refused; retrying cannot help.
      shouldRetry: (e) => !(e && e.code === 4403),
      onNonLazyError: () => undefined, // reported by `closed`
      on: {
        connected: () => {
          if (client !== state.client) return;
          setLive(true, "live");
          if (state.everConnected && state.integration) loadEvents(state.integration);
          state.everConnected = true;
        },
        closed: (e) => {
          if (client !== state.client) return;
          if (e && e.code === 4403) {
            setLive(false, "refused");
            showError(e.reason || "The server refused the token.");
          } else setLive(false, "disconnected");
        },
      },
    });
    state.client = client;
    try {
      const list = await api("/v1/integrations?limit=1000");
      const select = $("integration");
      select.textContent = "";
      const none = document.createElement("option");
      none.value = "";
      none.textContent = "— pick an integration —";
      select.appendChild(none);
      for (const integration of list.items) {
        if (!integration.owner || !integration.owner.permissions || !integration.owner.permissions.view) continue; // events: members of the owner only
        const option = document.createElement("option");
        option.value = integration.name;
        option.textContent = integration.title + " (" + integration.name + ")";
        select.appendChild(option);
      }
      select.disabled = false;
      const wanted = query.get("integration") || stored.get("dashboard-integration");
      if (wanted && [...select.options].some((o) => o.value === wanted)) {
        select.value = wanted;
        await loadIntegration(wanted);
      }
    } catch (err) {
      showError(err.message);
    }
  }

  $("connect").addEventListener("click", connect);
  $("token").addEventListener("keydown", (e) => {
    if (e.key === "Enter") connect();
  });
  $("integration").addEventListener("change", (e) => loadIntegration(e.target.value));
  $("type-filter").addEventListener("change", () => {
    saveView();
    render();
  });
  $("status-filter").addEventListener("change", () => {
    saveView();
    render();
  });

  // Restore the view of before a reload: filters from the address, then the token, which reconnects.
  if (query.get("type")) {
    addType(query.get("type"));
    $("type-filter").value = query.get("type");
  }
  if (STATUSES.includes(query.get("status"))) $("status-filter").value = query.get("status");
  $("token").value = stored.get("dashboard-token");
  render();
  if ($("token").value) connect();
})();
