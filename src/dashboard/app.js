// Live event dashboard: REST for the recent events and an event's trace, graphql-ws for new events.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const state = { token: "", integration: "", events: new Map(), order: [], client: null, unsubscribe: null, selected: null, types: new Set() };

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

  function cell(text) {
    const td = document.createElement("td");
    td.textContent = text == null ? "" : String(text);
    return td;
  }

  function render(newIds) {
    const tbody = document.querySelector("#events tbody");
    tbody.textContent = "";
    let shown = 0;
    for (const id of state.order) {
      const event = state.events.get(id);
      if (!matches(event)) continue;
      shown++;
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
      statusCell.appendChild(badge);
      tr.appendChild(statusCell);
      tr.appendChild(cell(event.installationId || ""));
      tr.appendChild(cell(event.id));
      tr.addEventListener("click", () => openEvent(event.id));
      tbody.appendChild(tr);
    }
    $("no-events").hidden = shown > 0;
  }

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

  async function openEvent(id) {
    state.selected = id;
    render();
    try {
      const answer = await api("/v1/integrations/" + encodeURIComponent(state.integration) + "/events/" + encodeURIComponent(id));
      $("detail").hidden = false;
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

  const EVENT_FIELDS = "id integrationId installationId createdAt status payload { eventId type installationId status spaceId revisionId changeRequestId changeRequestStatus commentId replyTo previous { status configuration } }";

  function subscribe() {
    if (state.unsubscribe) state.unsubscribe();
    const name = state.integration;
    setLive(false, "connecting…");
    state.unsubscribe = state.client.subscribe(
      { query: "subscription ($name: String!) { integrationEvents(integrationName: $name) { " + EVENT_FIELDS + " } }", variables: { name } },
      {
        next: (result) => {
          if (result.errors) return showError(result.errors[0].message);
          if (name === state.integration && result.data) upsert(result.data.integrationEvents, true);
        },
        error: (err) => {
          setLive(false, "disconnected");
          showError(Array.isArray(err) ? err[0].message : err.message || err.reason || "subscription failed");
        },
        complete: () => setLive(false, "stopped"),
      },
    );
  }

  async function loadIntegration(name) {
    state.integration = name;
    state.events.clear();
    state.order = [];
    state.selected = null;
    $("detail").hidden = true;
    render();
    if (!name) return;
    showError("");
    subscribe();
    try {
      const page = await api("/v1/integrations/" + encodeURIComponent(name) + "/events?limit=100");
      for (const event of page.items.reverse()) upsert(event, false);
    } catch (err) {
      showError(err.message);
    }
  }

  async function connect() {
    state.token = $("token").value.trim();
    showError("");
    if (!state.token) return showError("Type an API token first.");
    try { sessionStorage.setItem("dashboard-token", state.token); } catch (_) { /* storage may be off */ }
    if (state.client) state.client.dispose();
    const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/graphql";
    state.client = graphqlWs.createClient({
      url,
      connectionParams: { authorization: "Bearer " + state.token },
      retryAttempts: 5,
      on: {
        connected: () => setLive(true, "live"),
        closed: () => setLive(false, "disconnected"),
      },
    });
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
      const wanted = new URLSearchParams(location.search).get("integration");
      if (wanted && [...select.options].some((o) => o.value === wanted)) {
        select.value = wanted;
        await loadIntegration(wanted);
      }
    } catch (err) {
      showError(err.message);
    }
  }

  $("connect").addEventListener("click", connect);
  $("token").addEventListener("keydown", (e) => { if (e.key === "Enter") connect(); });
  $("integration").addEventListener("change", (e) => loadIntegration(e.target.value));
  $("type-filter").addEventListener("change", () => render());
  $("status-filter").addEventListener("change", () => render());
  try { $("token").value = sessionStorage.getItem("dashboard-token") || ""; } catch (_) { /* storage may be off */ }
  render();
})();
