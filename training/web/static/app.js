/* Blackout in the browser: the page of `blackout serve` (protocol: docs/web.md).
 *
 * The page knows no rule of the game: what is legal, why a card or a bid is not, the suggested bid, the b/o
 * marks, trumped-in cards, the bid totals and the winners all come in the server's `state` message; the page
 * draws them and sends {"type": "act", "action": id}.
 *
 * Stable hooks for tests (tests/test_web_browser.py):
 *   body[data-mode|data-status|data-phase|data-move|data-round|data-table|data-your-turn|data-you]
 *                                  the last state drawn ("play"/"watch"/"replay", "playing"/"over"/..., ...)
 *   #new-game                      opens #new-game-dialog: #ng-mode-play / #ng-mode-watch / #ng-mode-table,
 *                                  #ng-rules, #ng-players, #ng-hook, #ng-seat-N (a select per seat), #ng-delay,
 *                                  #ng-seed, #ng-takeover, #ng-start (submit), #ng-cancel
 *   #round-bar                     #round-label, #hand-size, #trump, #bid-total
 *   #status                        what happens now (whose turn, waiting, game over)
 *   #table .seat[data-seat=N]      classes you / to-act / dealer / away / impossible; .seat-name, .seat-bid,
 *                                  .seat-tricks (.count "×N"), .seat-score, .dealer-chip, .bo (b/o and
 *                                  svg.mark-impossible), .seat-hand .card; svg.mark-winner beside a winner's name
 *   #trick .play[data-seat=N] .card[data-card=ID]   class trumped-in (flashes on your turn); #led-suit
 *   #bids button[data-bid=K][data-action=A]          classes suggested / forbidden (forbidden: disabled);
 *                                  #bid-reason (the forbidden bid's reason, the suggestion)
 *   #hand button.card[data-card=ID]                  class illegal (title: the engine's reason), playable
 *   #scores-button -> #score-sheet (dialog) #score-table: tr.hand-row[data-round=R], tr.current, tr.totals;
 *                                  td.bo (missed or impossible; svg.mark-impossible), td.made, td.winner
 *                                  (svg.mark-winner). The marks are inline SVG: no emoji font needed
 *   #last-trick-button -> #last-trick (dialog)
 *   #game-over, #winners, #game-over-new
 *   #lobby, #share-link (the whole link, wrapped), #copy-link, #start, #close-lobby (host);
 *                                  #lobby-name, #lobby-name-set (a person names their seat); #ng-name
 *   #controls: #pause, #step, #speed, #reveal, #retry (host controls; #reveal enabled when can_reveal)
 *   #why-toggle (aria-pressed) -> #why-panel: .why-action[data-action=A] (class chosen), .bar > span, #why-value
 *   #replay-button -> #replay-dialog: #replay-list (this browser's games only) button[data-game=ID] (replay)
 *                                  or button[data-join=ID] (resume), #replay-file (its text is sent, never a path);
 *   #replay-bar: #replay-prev, #replay-next, #replay-start, #replay-end, #replay-seek, #replay-game, #replay-close
 *   #error-banner (#error-text, #error-dismiss), #join-failed (#join-failed-new, #join-failed-resume,
 *                                  #join-failed-rejoin: a stale seat token, join as a new player), #conn,
 *   #log li (class: the event's kind)
 * Keys: 0-9 bid; Tab / Enter choose and play a card; ← / → step a replay.
 */
"use strict";

(() => {
  const STORE_GAME = "blackout.game";
  const STORE_TOKENS = "blackout.tokens";
  const STORE_SETTINGS = "blackout.settings";
  const SUIT_NAMES = ["clubs", "diamonds", "hearts", "spades"];
  const MAX_LOG = 400;

  const $ = (selector, root = document) => root.querySelector(selector);
  const body = document.body;

  let ws = null;
  let hello = null;
  let state = null;
  let current = null;          // {table, token, seat, host} of the last `joined`
  let pendingJoin = null;      // the table a `join` was sent for, until `joined` or an error
  let replaySource = null;     // {game} or {content, index} of the open replay (sent again after a reconnect)
  let whyOn = false;
  let retryDelay = 500;
  let reconnectTimer = null;
  let acting = false;          // an `act` is on its way: no second one before the next state
  let speedDragging = false;
  let seekInFlight = false;    // a replay `seek` is on its way: the next waits for its state (the rate limit)
  let seekWanted = null;       // the move the slider asked for meanwhile
  let logEntries = [];
  let logKey = null;
  let logMove = -1;

  // ------------------------------------------------------------------ helpers
  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function readJSON(key) {
    try { return JSON.parse(localStorage.getItem(key)); } catch (error) { return null; }
  }

  function writeJSON(key, value) {
    try { localStorage.setItem(key, JSON.stringify(value)); } catch (error) { /* private mode: no resume */ }
  }

  /** A seat's name as this page shows it: the server's name, and "(you)" for this page's own seat only. */
  function seatName(index) {
    if (!state || index === null || index === undefined || !state.seats[index]) return `P${index}`;
    return state.seats[index].name + (index === state.you ? " (you)" : "");
  }

  /** A mark drawn in inline SVG (index.html's templates; no emoji font needed): "winner" (a cup),
   * "impossible" (a sad face: the bid can no longer be made) or "joker" (a star). */
  function mark(kind, label) {
    const svg = $(`#mark-${kind}`).content.firstElementChild.cloneNode(true);
    svg.setAttribute("aria-label", label);
    svg.querySelector("title").textContent = label;
    return svg;
  }

  /** The bids a person may make, in words: "0–3", "0, 2 or 3" (the forbidden one left out). */
  function legalBidsText(bidding) {
    const bids = bidding.options.filter((option) => !option.forbidden).map((option) => option.bid);
    const runs = [];
    for (const bid of bids) {
      const last = runs[runs.length - 1];
      if (last && bid === last[1] + 1) last[1] = bid;
      else runs.push([bid, bid]);
    }
    const words = runs.map(([low, high]) => (low === high ? `${low}` : high === low + 1 ? `${low}, ${high}` : `${low}–${high}`));
    return words.length > 1 ? `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}` : words[0] || "";
  }

  function rankText(card) {
    return card.rank === "T" ? "10" : card.rank;
  }

  function cardLabel(card) {
    if (card.suit === null) return `joker ${card.text}`;
    return `${rankText(card)} of ${SUIT_NAMES[card.suit]}`;
  }

  /** A card face: <tag class="card suit-N" data-card=ID><span class=rank>Q</span><span class=pip>♠</span></tag>. */
  function cardFace(card, tag = "span", extraClass = "") {
    const suit = card.suit === null ? "joker" : `suit-${card.suit}`;
    const node = h(tag, {class: `card ${suit} ${extraClass}`.trim(), dataset: {card: card.card}},
      h("span", {class: "rank", text: card.suit === null ? "JK" : rankText(card)}),
      card.suit === null ? h("span", {class: "pip joker-pip", "aria-hidden": "true"}, mark("joker", "joker"))
        : h("span", {class: "pip", text: card.symbol, "aria-hidden": "true"}));
    if (tag !== "button") {
      node.setAttribute("role", "img");
      node.setAttribute("aria-label", cardLabel(card));
    }
    return node;
  }

  function fmt(number, digits = 2) {
    if (number === null || number === undefined) return "–";
    if (Math.abs(number) >= 100) return number.toFixed(0);
    return Number(number.toFixed(digits)).toString();
  }

  function typing(target) {
    return target && target.closest && target.closest("input, select, textarea, dialog");
  }

  // --------------------------------------------------------------- connection
  function socketURL() {
    return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
  }

  function connect() {
    clearTimeout(reconnectTimer);
    setConn("connecting…", "connecting");
    try {
      ws = new WebSocket(socketURL());
    } catch (error) {
      scheduleReconnect();
      return;
    }
    ws.addEventListener("open", () => {
      retryDelay = 500;
      setConn("connected", "up");
    });
    ws.addEventListener("message", (event) => {
      let message;
      try { message = JSON.parse(event.data); } catch (error) { return; }
      onMessage(message);
    });
    ws.addEventListener("close", () => {
      ws = null;
      if (!leaving) scheduleReconnect();
    });
  }

  // Leaving the page (or going into the back-forward cache) closes the socket at once, so the table shows the
  // seat away now; coming back from that cache connects again (and joins again on `hello`).
  let leaving = false;
  window.addEventListener("pagehide", () => {
    leaving = true;
    clearTimeout(reconnectTimer);
    if (ws) ws.close(1000, "page hidden");
  });
  window.addEventListener("pageshow", (event) => {
    leaving = false;
    if (event.persisted && !ws) connect();
  });

  function scheduleReconnect() {
    const seconds = (retryDelay / 1000).toFixed(1).replace(/\.0$/, "");
    setConn(`disconnected: reconnecting in ${seconds} s`, "down");
    reconnectTimer = setTimeout(connect, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 10000);
  }

  function setConn(text, kind) {
    const conn = $("#conn");
    conn.textContent = text;
    conn.dataset.state = kind;
  }

  function send(message) {
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      showError("Not connected to the server: the page reconnects by itself, try again in a moment.");
      return false;
    }
    ws.send(JSON.stringify(message));
    return true;
  }

  function act(action) {
    if (acting) return;
    if (send({type: "act", action})) acting = true;
  }

  function join(table, token) {
    pendingJoin = table;
    const message = {type: "join", table};
    if (token) message.token = token;
    else if (myName()) message.name = myName();  // the name an open seat takes
    send(message);
  }

  /** The name this person chose (New game dialog, lobby), or "" for the server's default. */
  function myName() {
    return (readJSON(STORE_SETTINGS) || {}).name || "";
  }

  function rememberName(name) {
    const settings = readJSON(STORE_SETTINGS) || {};
    settings.name = name;
    writeJSON(STORE_SETTINGS, settings);
  }

  function forgetToken(table) {
    const tokens = readJSON(STORE_TOKENS) || {};
    delete tokens[table];
    writeJSON(STORE_TOKENS, tokens);
    const stored = readJSON(STORE_GAME);
    if (stored && stored.table === table) writeJSON(STORE_GAME, null);
  }

  /** After `hello`: back to the replay, the table of the URL, or the stored game; else offer a new game. */
  function resume() {
    if (whyOn) send({type: "why", on: true});
    if (replaySource) {
      const move = state && state.replay ? state.replay.move : 0;
      send({type: "replay", ...replaySource});
      if (move) send({type: "seek", move});
      return;
    }
    if (current) {
      join(current.table, current.token);
      return;
    }
    const wanted = new URLSearchParams(location.search).get("table");
    const stored = readJSON(STORE_GAME);
    if (wanted) {
      const tokens = readJSON(STORE_TOKENS) || {};
      const token = stored && stored.table === wanted && stored.token ? stored.token : tokens[wanted];
      join(wanted, token);
    } else if (stored && stored.table) {
      join(stored.table, stored.token);
    } else {
      setStatus("No game yet: start one.");
      openNewGame();
    }
  }

  // ----------------------------------------------------------------- messages
  function onMessage(message) {
    switch (message.type) {
      case "hello":
        hello = message;
        fillNewGame();
        resume();
        break;
      case "joined":
        onJoined(message);
        break;
      case "state":
        acting = false;
        state = message;
        if (seekInFlight) {
          seekInFlight = false;
          if (seekWanted !== null && state.replay && seekWanted !== state.replay.move) {
            const move = seekWanted;
            seekWanted = null;
            seek(move);
          }
          seekWanted = null;
        }
        if (state.status === "lobby") {  // the server deals in the lobby; nobody acts before the host starts
          state.your_turn = false;
          state.bidding = null;
        }
        render();
        break;
      case "games":
        renderGames(message.games);
        break;
      case "error":
        acting = false;
        onError(message);
        break;
      default:
        break;
    }
  }

  function onJoined(message) {
    pendingJoin = null;
    current = {table: message.table, token: message.token, seat: message.seat, host: message.host};
    writeJSON(STORE_GAME, {table: message.table, token: message.token});
    if (message.token) {
      const tokens = readJSON(STORE_TOKENS) || {};
      tokens[message.table] = message.token;
      const ids = Object.keys(tokens);
      for (const id of ids.slice(0, Math.max(0, ids.length - 50))) delete tokens[id];
      writeJSON(STORE_TOKENS, tokens);
    }
    const url = `${location.pathname}?table=${encodeURIComponent(message.table)}`;
    if (location.search !== `?table=${encodeURIComponent(message.table)}`) history.replaceState(null, "", url);
    $("#join-failed").hidden = true;
  }

  function onError(message) {
    if (message.code === "limit" && seekInFlight) seekInFlight = false;
    if (pendingJoin !== null && (message.code === "no_table" || message.code === "bad_save" || message.code === "bad_token")) {
      const failed = pendingJoin;
      const rejoin = $("#join-failed-rejoin");
      rejoin.hidden = message.code !== "bad_token";
      if (message.code === "bad_token") {  // a stale or forged seat token: drop it; the person may join afresh
        forgetToken(failed);
        rejoin.onclick = () => {
          $("#join-failed").hidden = true;
          join(failed, null);
        };
      }
      pendingJoin = null;
      current = null;
      state = null;
      render();
      $("#join-failed-text").textContent = message.code === "bad_token"
        ? `Your seat was not taken: ${message.message}.` : `This game cannot be opened: ${message.message}`;
      $("#join-failed").hidden = false;
      const stored = readJSON(STORE_GAME);
      const resume = $("#join-failed-resume");
      resume.hidden = !(stored && stored.table && stored.table !== failed);
      resume.onclick = () => {
        $("#join-failed").hidden = true;
        join(stored.table, stored.token);
      };
      setStatus("The game could not be opened: start a new one.");
      history.replaceState(null, "", location.pathname);
    }
    showError(message.message, message.code);
  }

  function showError(text, code) {
    $("#error-text").textContent = text;
    $("#error-banner").dataset.code = code || "";
    $("#error-banner").hidden = false;
  }

  function setStatus(text) {
    $("#status").textContent = text;
  }

  // ------------------------------------------------------------------- render
  function render() {
    const s = state;
    body.dataset.mode = s ? s.mode : "none";
    body.dataset.status = s ? s.status : "none";
    body.dataset.phase = s ? s.phase : "";
    body.dataset.move = s ? s.move : "";
    body.dataset.round = s ? s.round : "";
    body.dataset.table = s && s.table ? s.table : "";
    body.dataset.you = s && s.you !== null ? s.you : "";
    body.dataset.yourTurn = s && s.your_turn ? "true" : "false";
    body.classList.toggle("your-turn", Boolean(s && s.your_turn));
    $("#main").hidden = !s;
    $("#round-bar").hidden = !s;
    if (!s) {
      $("#last-trick-button").disabled = true;
      $("#controls").hidden = true;
      $("#replay-bar").hidden = true;
      return;
    }
    renderRoundBar(s);
    renderStatus(s);
    renderControls(s);
    renderReplayBar(s);
    renderSeats(s);
    renderCenter(s);
    $("#actions").hidden = s.you === null;  // a spectator has no hand
    renderBids(s);
    renderHand(s);
    renderWhy(s);
    mergeLog(s);
    if ($("#score-sheet").open) renderScoreSheet();
    if ($("#last-trick").open) renderLastTrick();
    $("#last-trick-button").disabled = !s.last_trick;
  }

  function renderRoundBar(s) {
    $("#round-label").textContent = `Hand ${Math.min(s.round + 1, s.num_rounds)} of ${s.num_rounds}`;
    $("#hand-size").textContent = `${s.hand_size} card${s.hand_size === 1 ? "" : "s"}`;
    const trump = $("#trump");
    trump.replaceChildren();
    if (s.trump.suit === null) {
      trump.append(h("span", {class: "label", text: "No trump"}));
      if (s.turned_card) trump.append(" (turned ", cardFace(s.turned_card, "span", "mini"), ")");
    } else {
      trump.append(h("span", {class: "label", text: "Trump "}));
      if (s.turned_card) trump.append(cardFace(s.turned_card, "span", "mini"), " ");
      trump.append(h("span", {class: `suit-name suit-${s.trump.suit}`, text: `${s.trump.symbol} ${s.trump.name}`}));
      if (s.turned_by_dealer) trump.append(h("small", {text: " (the dealer's last card)"}));
    }
    $("#bid-total").textContent = s.bid_total.text;
  }

  function renderStatus(s) {
    let text;
    const status = $("#status");
    status.className = "";
    if (s.mode === "replay") {
      text = `Replay of ${s.replay.label}: move ${s.replay.move} of ${s.replay.moves}`;
    } else if (s.status === "lobby") {
      text = s.host ? "Waiting for people to join: share the link, then start the game."
        : "Waiting for the host to start the game.";
    } else if (s.status === "over") {
      text = `Game over: ${winnersText(s)}`;
    } else if (s.waiting) {
      text = s.waiting.reason;
      status.className = "waiting";
    } else if (s.your_turn) {
      text = s.phase === "bid" && s.bidding ? `Your turn: bid ${legalBidsText(s.bidding)} (number keys)` : "Your turn: play a card";
      status.className = "turn";
    } else if (s.current_player !== null) {
      text = `${seatName(s.current_player)} to ${s.phase === "bid" ? "bid" : "play"}`;
      if (s.you === null) text = `Watching. ${text}`;
    } else {
      text = "";
    }
    if (s.paused && s.mode !== "replay" && s.status === "playing") text += " (bots paused)";
    setStatus(text);
  }

  function winnersText(s) {
    if (!s.winners) return "";
    const names = s.winners.map((w) => `${seatName(w)} with ${s.seats[w].score} points`);
    return `${names.join(" and ")} ${s.winners.length > 1 ? "win" : "wins"}`;
  }

  function renderControls(s) {
    const show = s.mode !== "replay" && s.status !== "lobby";
    $("#controls").hidden = !show;
    if (!show) return;
    for (const id of ["#pause", "#step", "#speed", "#speed-label"]) $(id).hidden = !s.host;
    const pause = $("#pause");
    pause.textContent = s.paused ? "Resume" : "Pause";
    pause.setAttribute("aria-pressed", s.paused ? "true" : "false");
    pause.disabled = s.status === "over";
    $("#step").disabled = !s.paused || s.status === "over";
    if (!speedDragging) $("#speed").value = s.bot_delay_ms;
    $("#speed-value").textContent = `${$("#speed").value} ms`;
    const reveal = $("#reveal");
    reveal.checked = Boolean(s.reveal);
    reveal.disabled = !s.can_reveal;
    reveal.parentElement.title = s.can_reveal ? "Show every seat's cards"
      : "Hands stay hidden while people play at this table (until the game is over)";
    const waitingBot = s.waiting && s.seats[s.waiting.seat] && s.seats[s.waiting.seat].kind === "bot";
    $("#retry").hidden = !(s.host && waitingBot);
  }

  function renderReplayBar(s) {
    const bar = $("#replay-bar");
    bar.hidden = s.mode !== "replay";
    if (s.mode !== "replay") return;
    const r = s.replay;
    $("#replay-label").textContent = r.label;
    const seek = $("#replay-seek");
    seek.max = r.moves;
    seek.value = r.move;
    $("#replay-move").textContent = `${r.move} / ${r.moves}`;
    $("#replay-prev").disabled = $("#replay-start").disabled = r.move <= 0;
    $("#replay-next").disabled = $("#replay-end").disabled = r.move >= r.moves;
    const select = $("#replay-game");
    select.hidden = r.games.length < 2;
    $("#replay-label").hidden = r.games.length > 1;  // the select names the game
    if (r.games.length > 1) {
      if (select.options.length !== r.games.length || select.dataset.key !== r.games.join("\n")) {
        select.replaceChildren(...r.games.map((label, index) => h("option", {value: index, text: label})));
        select.dataset.key = r.games.join("\n");
      }
      select.value = String(r.index);
    }
  }

  /** Where each seat sits: yours at the bottom, the others clockwise (left, across, right). */
  function seatSlots(n, bottom) {
    const others = [];
    for (let k = 1; k < n; k++) others.push((bottom + k) % n);
    if (others.length < 3) return {left: [], top: others, right: [], you: [bottom], others};
    return {left: [others[0]], top: others.slice(1, -1), right: [others[others.length - 1]], you: [bottom], others};
  }

  function renderSeats(s) {
    const n = s.seats.length;
    const bottom = s.you !== null ? s.you : 0;
    const slots = seatSlots(n, bottom);
    for (const name of ["top", "left", "right", "you"]) {
      const slot = $(`#slot-${name}`);
      // the order is for the phone layout, where the seats wrap in one list: clockwise, yours last
      slot.replaceChildren(...slots[name].map((seat) => seatBox(s, s.seats[seat],
        seat === bottom ? 60 : slots.others.indexOf(seat) + 1)));
    }
  }

  function seatBox(s, seat, order) {
    const classes = ["seat"];
    if (seat.seat === s.you) classes.push("you");
    if (seat.to_act && s.status !== "over" && s.status !== "lobby") classes.push("to-act");
    if (seat.dealer) classes.push("dealer");
    if (seat.bid_impossible) classes.push("impossible");
    if (seat.kind === "person" && !seat.connected) classes.push("away");
    if (s.winners && s.winners.includes(seat.seat)) classes.push("winner");
    let presence = null;
    if (seat.kind === "person") {
      presence = h("span", {class: `presence ${seat.connected ? "here" : "gone"}`,
        text: seat.connected ? "connected" : "away"});
    } else if (seat.kind === "open") {
      presence = h("span", {class: "presence open", text: "open seat"});
    }
    const head = h("div", {class: "seat-head"},
      h("span", {class: "seat-name", text: seatName(seat.seat)}),
      s.winners && s.winners.includes(seat.seat) ? mark("winner", "winner") : null,
      seat.dealer ? h("span", {class: "dealer-chip", title: "the dealer", "aria-label": "dealer", text: "D"}) : null,
      presence);
    const stack = h("span", {class: "stack", "aria-hidden": "true"});
    for (let i = 0; i < Math.min(seat.tricks_won, 6); i++) stack.append(h("i"));
    const bidding = seat.to_act && s.phase === "bid" && s.status !== "lobby";
    const bidText = seat.bid === null ? (bidding ? "bidding…" : "bid –") : `bid ${seat.bid}`;
    const stats = h("div", {class: "seat-stats"},
      h("span", {class: "seat-bid", text: bidText}),
      h("span", {class: "seat-tricks", title: `${seat.tricks_won} trick${seat.tricks_won === 1 ? "" : "s"} won`},
        stack, h("span", {class: "count", text: `×${seat.tricks_won}`})),
      h("span", {class: "seat-score", title: "score", text: `${seat.score} pts`}),
      seat.bid_impossible ? h("span", {class: "bo", title: "this bid can no longer be made"}, "b/o ",
        mark("impossible", "can no longer be made")) : null);
    const box = h("div", {class: classes.join(" "), dataset: {seat: seat.seat}, style: `order:${order}`,
      "aria-current": seat.to_act ? "true" : null}, head, stats);
    if (seat.hand && seat.hand.length) {
      box.append(h("div", {class: "seat-hand", "aria-label": `${seatName(seat.seat)}: cards`},
        seat.hand.map((card) => cardFace(card, "span", "mini"))));
    } else if (seat.seat !== s.you && s.status !== "lobby" && seat.cards_left) {
      box.append(h("div", {class: "seat-cards", text: `${seat.cards_left} card${seat.cards_left === 1 ? "" : "s"}`}));
    }
    return box;
  }

  function renderCenter(s) {
    const lobby = $("#lobby");
    lobby.hidden = s.status !== "lobby";
    if (s.status === "lobby") renderLobby(s);
    const over = $("#game-over");
    over.hidden = !s.winners;
    if (s.winners) $("#winners").replaceChildren(winnersText(s), " ", mark("winner", "winner"));
    $("#game-over-new").hidden = s.mode === "replay";

    $("#trick-area").hidden = s.status === "lobby";
    $("#trick-label").textContent = s.phase === "play" ? `Trick ${s.trick_number} of ${s.hand_size}` : "";
    const led = $("#led-suit");
    led.replaceChildren();
    if (s.led_suit) {
      led.append("Led: ", h("span", {class: `suit-name suit-${s.led_suit.suit}`,
        text: `${s.led_suit.symbol} ${s.led_suit.name}`}));
    }
    const trick = $("#trick");
    trick.replaceChildren(...s.trick.map((play) => {
      const face = cardFace(play.card, "span", play.trumped_in ? "trumped-in" : "");
      if (play.trumped_in) face.title = "trumped in";
      return h("div", {class: "play", dataset: {seat: play.seat}}, face,
        h("span", {class: "who", text: seatName(play.seat)}),
        play.trumped_in ? h("span", {class: "trumped-label", text: "trumped in"}) : null);
    }));
    const echo = $("#trick-echo");
    echo.replaceChildren();
    if (!s.trick.length && s.last_trick && s.status === "playing") {
      echo.append(h("span", {class: "echo-label", text: `${seatName(s.last_trick.winner)} took the last trick:`}),
        ...s.last_trick.plays.map((play) => cardFace(play.card, "span", `mini${play.seat === s.last_trick.winner ? " won" : ""}`)));
    }
  }

  function renderLobby(s) {
    const open = s.seats.filter((seat) => seat.kind === "open").length;
    const closed = s.lobby_open === false;
    $("#lobby-text").textContent = !open ? "Every seat is taken."
      : closed ? `The lobby is closed: the ${open === 1 ? "open seat gets" : `${open} open seats get`} a bot at the start.`
        : `${open} seat${open === 1 ? " is" : "s are"} open. ${s.host ? "Seats nobody takes get a bot when you start." : ""}`;
    $("#share").hidden = closed || !open;
    $("#share-link").textContent = `${location.origin}${location.pathname}?table=${encodeURIComponent(s.table)}`;
    $("#lobby-seats").replaceChildren(...s.seats.map((seat) => h("li", {dataset: {seat: seat.seat}},
      seatName(seat.seat), " — ", seat.kind === "open" ? "waiting for a person"
        : seat.kind === "bot" ? `bot (${seat.policy})` : seat.connected ? "here" : "away")));
    $("#start").hidden = !s.host;
    $("#close-lobby").hidden = !s.host || closed || !open;
    const naming = $("#lobby-naming");
    naming.hidden = s.you === null || s.seats[s.you].kind !== "person";
    const input = $("#lobby-name");
    if (!naming.hidden && document.activeElement !== input) input.value = myName();
  }

  function focusInside(selector) {
    const active = document.activeElement;
    return active && active.closest && active.closest(selector) ? active : null;
  }

  /** Whether the page may move the focus to your bid or card: not while you are elsewhere (a dialog, the toolbar). */
  function mayTakeFocus() {
    const active = document.activeElement;
    if ($("dialog[open]")) return false;
    return !active || active === body || Boolean(focusInside("#actions"));
  }

  function renderBids(s) {
    const box = $("#bidding");
    const b = s.bidding;
    box.hidden = !b;
    const bids = $("#bids");
    const focused = focusInside("#bids");
    const focusedBid = focused ? focused.dataset.bid : null;
    if (!b) {
      bids.replaceChildren();
      $("#bid-reason").textContent = "";
      return;
    }
    const reasons = [];
    bids.replaceChildren(...b.options.map((option) => {
      const classes = ["bid"];
      let title = `Bid ${option.bid}`;
      if (option.suggested) { classes.push("suggested"); title += " (suggested)"; }
      if (option.forbidden) { classes.push("forbidden"); title = `You may not bid ${option.bid}: ${b.forbidden_reason}`; }
      return h("button", {type: "button", class: classes.join(" "), dataset: {bid: option.bid, action: option.action},
        disabled: option.forbidden, title, "aria-label": title, onclick: () => act(option.action)},
        h("span", {text: option.bid}));
    }));
    const forbidden = b.options.find((option) => option.forbidden);
    if (forbidden) reasons.push(h("span", {class: "forbidden-reason", text: `Not ${forbidden.bid}: ${b.forbidden_reason}.`}));
    if (b.suggestion !== null && b.suggestion !== undefined) {
      reasons.push(h("span", {class: "suggestion", text: ` Suggested: ${b.suggestion}.`}));
    }
    $("#bid-reason").replaceChildren(...reasons);
    const again = focusedBid !== null ? $(`#bids button[data-bid="${focusedBid}"]:not([disabled])`) : null;
    if (again) again.focus();
    else if (mayTakeFocus()) {
      const target = $("#bids button.suggested") || $("#bids button:not([disabled])");
      if (target) target.focus({preventScroll: true});
    }
  }

  function renderHand(s) {
    const hand = $("#hand");
    const focused = focusInside("#hand");
    const focusedCard = focused ? focused.dataset.card : null;
    const playing = s.your_turn && s.phase === "play";
    hand.replaceChildren(...s.hand.map((card) => {
      const illegal = playing && !card.legal;
      const classes = [illegal ? "illegal" : "", playing && card.legal ? "playable" : ""].join(" ");
      const button = cardFace(card, "button", classes);
      button.type = "button";
      button.dataset.action = card.card;
      const label = cardLabel(card);
      if (illegal) {
        button.title = card.reason || "not playable now";
        button.setAttribute("aria-disabled", "true");
        button.setAttribute("aria-label", `${label}: ${button.title}`);
      } else if (playing) {
        button.title = `Play the ${label}`;
        button.setAttribute("aria-label", button.title);
      } else {
        button.title = label;
        button.setAttribute("aria-disabled", "true");
        button.setAttribute("aria-label", label);
      }
      button.addEventListener("click", () => {
        if (!state || !state.your_turn || state.phase !== "play") {
          $("#hand-hint").textContent = state && state.phase === "bid" && state.your_turn ? "Bid first." : "Not your turn.";
          return;
        }
        if (!card.legal) {
          $("#hand-hint").textContent = `You may not play the ${label}: ${card.reason || "not playable now"}.`;
          return;
        }
        act(card.card);
      });
      return button;
    }));
    $("#hand-hint").textContent = s.you === null ? "" : s.hand.length ? "" : s.status === "lobby" ? "" : "No cards.";
    const again = focusedCard !== null ? $(`#hand button.card[data-card="${focusedCard}"]`) : null;
    if (again) again.focus({preventScroll: true});
    else if (playing && mayTakeFocus()) {
      const target = $("#hand button.card.playable");
      if (target) target.focus({preventScroll: true});
    }
  }

  // ------------------------------------------------------------------ why
  function renderWhy(s) {
    const panel = $("#why-panel");
    panel.hidden = !whyOn;
    if (!whyOn) return;
    const w = s.why;
    const title = h("h2", {text: "Why"});
    if (!w) {
      const reason = s.mode === "replay" ? "The replay viewer has no reasons to show."
        : "Nothing to explain yet: a bot's reasons show once it has moved, and only where you may see its hand "
          + "(watch mode with all hands shown, or your own bid's suggestion).";
      panel.replaceChildren(title, h("p", {class: "hint", text: reason}));
      return;
    }
    const verb = w.phase === "bid" ? "bids" : "plays";
    const metric = ["probability", "visits", "value"].find((key) => w.actions.some((a) => a[key] !== null && a[key] !== undefined));
    const numbers = metric ? w.actions.map((a) => a[metric]).filter((v) => v !== null && v !== undefined) : [];
    const low = Math.min(...numbers);
    const high = Math.max(...numbers);
    const rows = w.actions.map((a) => {
      let width = 0;
      const v = metric ? a[metric] : null;
      if (v !== null && v !== undefined) {
        if (metric === "probability") width = v * 100;
        else if (metric === "visits") width = high > 0 ? (v / high) * 100 : 0;
        else width = high > low ? 8 + ((v - low) / (high - low)) * 92 : 100;
      }
      const shown = v === null || v === undefined ? "–"
        : metric === "probability" ? `${(v * 100).toFixed(v >= 0.995 || v < 0.001 ? 0 : 1)}%` : fmt(v);
      const others = ["probability", "value", "visits"].filter((key) => a[key] !== null && a[key] !== undefined)
        .map((key) => `${key} ${fmt(a[key], 3)}`).join(", ");
      return h("li", {class: `why-action${a.chosen ? " chosen" : ""}`, dataset: {action: a.action}, title: others},
        h("span", {class: "why-label"}, a.card ? cardFace(a.card, "span", "mini") : a.label, a.chosen ? " ★" : ""),
        h("span", {class: "bar"}, h("span", {style: `width:${Math.max(0, Math.min(100, width)).toFixed(1)}%`})),
        h("span", {class: "why-number", text: shown}));
    });
    panel.replaceChildren(...[
      title,
      h("p", {class: "why-head"}, h("strong", {text: seatName(w.seat)}), ` ${verb} `,
        w.chosen.card ? cardFace(w.chosen.card, "span", "mini") : h("strong", {text: w.chosen.label.replace(/^bid /, "")})),
      h("p", {class: "why-policy"}, "Policy: ", h("strong", {text: w.policy}),
        w.policy.includes(w.kind) ? "" : ` (${w.kind})`),
      h("p", {id: "why-value"}, "Value estimate: ", h("strong", {text: w.value === null ? "none" : `${fmt(w.value)} points`})),
      metric ? h("p", {class: "hint", text: `Bars: ${metric === "value" ? "value of each action" : metric}`}) : null,
      h("ol", {class: "why-actions"}, rows),
      h("p", {class: "why-note hint", text: w.note}),
      s.decision_ms !== null && s.decision_ms !== undefined && w.policy.indexOf("suggestion") !== 0
        ? h("p", {class: "hint", text: `Last bot decision: ${fmt(s.decision_ms, 1)} ms`}) : null,
    ].filter(Boolean));
  }

  // ------------------------------------------------------------------ log
  function mergeLog(s) {
    const key = s.mode === "replay" ? `replay:${s.replay.label}:${s.replay.index}` : s.table;
    const incoming = s.events.map((event) => ({move: s.move, kind: event.kind, text: event.text}));
    let changed = false;
    if (key !== logKey || s.move < logMove || (!logEntries.length && incoming.length)) {
      logEntries = incoming;
      changed = true;
    } else if (s.move > logMove) {
      const texts = logEntries.map((entry) => entry.text);
      let overlap = 0;
      for (let k = Math.min(texts.length, incoming.length); k > 0; k--) {
        let same = true;
        for (let i = 0; i < k; i++) {
          if (texts[texts.length - k + i] !== incoming[i].text) { same = false; break; }
        }
        if (same) { overlap = k; break; }
      }
      const added = incoming.slice(overlap);
      if (added.length) {
        logEntries = logEntries.concat(added).slice(-MAX_LOG);
        changed = true;
      }
    }
    logKey = key;
    logMove = s.move;
    if (!changed) return;
    const list = $("#log");
    list.replaceChildren(...logEntries.map((entry) => h("li", {class: `event ${entry.kind}`, dataset: {move: entry.move},
      text: entry.text})));
    list.scrollTop = list.scrollHeight;
  }

  // ---------------------------------------------------------------- dialogs
  function openDialog(dialog) {
    if (!dialog.open) dialog.showModal();
  }

  function renderScoreSheet() {
    const table = $("#score-table");
    const s = state;
    if (!s) {
      table.replaceChildren(h("tbody", {}, h("tr", {}, h("td", {text: "No game yet."}))));
      return;
    }
    const sheet = s.score_sheet;
    const head = h("thead", {}, h("tr", {}, h("th", {scope: "col", text: "Hand"}), h("th", {scope: "col", text: "Cards"}),
      s.seats.map((seat) => h("th", {scope: "col", class: seat.seat === s.you ? "you" : "", text: seatName(seat.seat)}))));
    const rows = sheet.rows.map((row) => h("tr", {class: "hand-row", dataset: {round: row.round}},
      h("th", {scope: "row", text: row.round + 1}), h("td", {text: row.cards}),
      row.cells.map((cell, seat) => {
        const detail = `bid ${cell.bid}, took ${cell.taken}`;
        const main = cell.made ? String(cell.points) : `b/o${cell.points ? ` ${cell.points}` : ""}`;
        return h("td", {class: cell.made ? "made" : "bo", title: detail},
          h("span", {class: "points", text: main}), seat === row.dealer ? h("sup", {class: "dealer-mark", title: "dealer", text: "D"}) : null,
          h("small", {text: detail}));
      })));
    if (sheet.current) {
      const row = sheet.current;
      rows.push(h("tr", {class: "current", dataset: {round: row.round}},
        h("th", {scope: "row", text: `${row.round + 1} (now)`}), h("td", {text: row.cards}),
        row.cells.map((cell, seat) => {
          const main = cell.bid === null ? "–" : `bid ${cell.bid}`;
          return h("td", {class: cell.impossible ? "bo" : "", title: cell.impossible ? "this bid can no longer be made" : ""},
            cell.impossible ? h("span", {class: "points"}, "b/o ", mark("impossible", "can no longer be made"))
              : h("span", {class: "points", text: main}),
            seat === row.dealer ? h("sup", {class: "dealer-mark", title: "dealer", text: "D"}) : null,
            h("small", {text: cell.bid === null ? "" : `${cell.impossible ? `bid ${cell.bid}, ` : ""}took ${cell.taken}`}));
        })));
    }
    const foot = h("tfoot", {}, h("tr", {class: "totals"}, h("th", {scope: "row", text: "Total"}), h("td"),
      sheet.totals.map((total, seat) => s.winners && s.winners.includes(seat)
        ? h("td", {class: "winner"}, `${total} `, mark("winner", "winner")) : h("td", {text: total}))));
    table.replaceChildren(head, h("tbody", {}, rows), foot);
  }

  function renderLastTrick() {
    const box = $("#last-trick-body");
    const last = state && state.last_trick;
    if (!last) {
      box.replaceChildren(h("p", {text: "No trick has been played yet."}));
      return;
    }
    box.replaceChildren(
      h("p", {}, h("strong", {text: seatName(last.winner)}), " took it."),
      h("ol", {class: "last-plays"}, last.plays.map((play) => h("li", {class: play.seat === last.winner ? "won" : ""},
        cardFace(play.card), h("span", {class: "who", text: seatName(play.seat)})))));
  }

  /** This browser's games (the server lists only the tables it holds a token for): replay or resume each. */
  function renderGames(games) {
    const list = $("#replay-list");
    if (!games.length) {
      list.replaceChildren(h("li", {text: "No game of yours on this server yet."}));
      return;
    }
    list.replaceChildren(...games.map((game) => {
      const when = new Date(game.updated * 1000).toLocaleString();
      const where = game.over ? "finished" : `hand ${game.round + 1} of ${game.num_rounds}`;
      const seat = game.seat === null ? "you watched or hosted" : `you: ${game.names[game.seat]}`;
      const text = `${game.rules}, ${game.players} players, ${where} (${seat}) — ${when}`;
      const button = game.over
        ? h("button", {type: "button", dataset: {game: game.id}, onclick: () => openReplay({game: game.id})}, "Replay")
        : h("button", {type: "button", class: "secondary", dataset: {join: game.id},
          title: "A game still being played cannot be replayed: go back to it", onclick: () => {
            $("#replay-dialog").close();
            leaveReplayState();
            const tokens = readJSON(STORE_TOKENS) || {};
            current = null;
            join(game.id, tokens[game.id]);
          }}, "Resume");
      return h("li", {}, button, " ", h("span", {class: "game-id", text: game.id}), " ", text);
    }));
  }

  function listMyGames() {
    const tokens = readJSON(STORE_TOKENS) || {};
    const tables = Object.entries(tokens).map(([table, token]) => ({table, token}));
    send({type: "list", tables: tables.slice(-50)});
  }

  /** One `seek` at a time: a slider dragged fast asks for the latest move once the last one is drawn. */
  function seek(move) {
    if (seekInFlight) {
      seekWanted = move;
      return;
    }
    if (send({type: "seek", move})) seekInFlight = true;
  }

  function leaveReplayState() {
    replaySource = null;
    state = null;
    logKey = null;
  }

  function openReplay(source) {
    replaySource = source;
    logKey = null;
    if (send({type: "replay", ...source})) $("#replay-dialog").close();
  }

  // --------------------------------------------------------------- new game
  function fillNewGame() {
    const settings = readJSON(STORE_SETTINGS) || {};
    const rules = $("#ng-rules");
    rules.replaceChildren(...hello.presets.map((preset) => h("option", {value: preset.name,
      text: `${preset.name} — ${preset.summary}`})));
    const names = hello.presets.map((preset) => preset.name);
    rules.value = names.includes(settings.rules) ? settings.rules : hello.defaults.rules;
    if (settings.players) $("#ng-players").value = String(settings.players);
    else $("#ng-players").value = String(hello.defaults.players);
    $("#ng-delay").value = settings.bot_delay_ms !== undefined ? settings.bot_delay_ms : hello.defaults.bot_delay_ms;
    $("#speed").max = hello.defaults.max_bot_delay_ms || 5000;
    $("#ng-delay").max = hello.defaults.max_bot_delay_ms || 5000;
    if (settings.mode) {
      const radio = $(`#ng-mode-${settings.mode}`);
      if (radio) radio.checked = true;
    }
    seatChoices = {};
    seatMode = null;
    if (Array.isArray(settings.seats) && settings.mode) seatChoices[settings.mode] = settings.seats.slice();
    $("#ng-hook").checked = settings.hook !== undefined ? Boolean(settings.hook) : presetOf(rules.value).hook;
    $("#ng-name").value = settings.name || "";
    const maxName = (hello.limits && hello.limits.max_name_chars) || 24;
    $("#ng-name").maxLength = maxName;
    $("#lobby-name").maxLength = maxName;
    showPresetSummary();
    renderSeatSelectors();
  }

  let seatChoices = {};       // per mode, the seat selects' last values
  let seatMode = null;        // the mode the seat selects were drawn for

  function presetOf(name) {
    return (hello && hello.presets.find((preset) => preset.name === name)) || {players: 4, hook: true, summary: ""};
  }

  function mode() {
    const checked = $("#new-game-form input[name=mode]:checked");
    return checked ? checked.value : "play";
  }

  function showPresetSummary() {
    const preset = presetOf($("#ng-rules").value);
    $("#ng-rules-summary").textContent = preset.summary + (preset.hand_sizes ? `; ${preset.players} players by default` : "");
  }

  function renderSeatSelectors() {
    if (!hello) return;
    const n = Number($("#ng-players").value);
    const m = mode();
    const box = $("#ng-seats");
    if (seatMode) seatChoices[seatMode] = [...box.querySelectorAll("select")].map((select) => select.value);
    const remembered = seatChoices[m] || [];
    const rows = [];
    for (let i = 0; i < n; i++) {
      const you = m !== "watch" && i === 0;
      const options = you ? ["you"] : m === "table" ? ["open", ...hello.policies] : hello.policies.slice();
      const fallback = you ? "you" : m === "table" ? "open"
        : hello.policies.includes("heuristic") ? "heuristic" : hello.policies[0];
      const select = h("select", {id: `ng-seat-${i}`, disabled: you},
        options.map((option) => h("option", {value: option,
          text: option === "open" ? "open (a person)" : option})));
      select.value = options.includes(remembered[i]) ? remembered[i] : fallback;
      rows.push(h("div", {class: "seat-choice"}, h("label", {for: `ng-seat-${i}`, text: `Seat ${i}`}), select));
    }
    seatMode = m;
    box.replaceChildren(...rows);
    $("#ng-takeover-row").hidden = m !== "table";
    $("#ng-name-row").hidden = m === "watch";
  }

  function openNewGame() {
    if (!hello) return;
    renderSeatSelectors();
    openDialog($("#new-game-dialog"));
  }

  function submitNewGame(event) {
    event.preventDefault();
    const n = Number($("#ng-players").value);
    const seats = [];
    for (let i = 0; i < n; i++) seats.push($(`#ng-seat-${i}`).value);
    const message = {type: "new", rules: $("#ng-rules").value, players: n, hook: $("#ng-hook").checked, seats,
      bot_delay_ms: Number($("#ng-delay").value || 0)};
    const name = $("#ng-name").value.trim();
    if (name && mode() !== "watch") message.name = name;
    const seed = $("#ng-seed").value.trim();
    if (seed !== "") message.seed = Number(seed);
    const takeover = $("#ng-takeover").value.trim();
    if (mode() === "table" && takeover !== "") message.takeover_s = Number(takeover);
    writeJSON(STORE_SETTINGS, {rules: message.rules, players: n, hook: message.hook, mode: mode(), seats,
      bot_delay_ms: message.bot_delay_ms, name});
    if (!send(message)) return;
    replaySource = null;
    current = null;
    state = null;
    logKey = null;
    $("#join-failed").hidden = true;
    $("#new-game-dialog").close();
  }

  // ------------------------------------------------------------------ wiring
  function wire() {
    $("#new-game").addEventListener("click", openNewGame);
    $("#game-over-new").addEventListener("click", openNewGame);
    $("#join-failed-new").addEventListener("click", openNewGame);
    $("#new-game-form").addEventListener("submit", submitNewGame);
    $("#ng-cancel").addEventListener("click", () => $("#new-game-dialog").close());
    $("#ng-rules").addEventListener("change", () => {
      const preset = presetOf($("#ng-rules").value);
      $("#ng-players").value = String(preset.players);
      $("#ng-hook").checked = preset.hook;
      showPresetSummary();
      renderSeatSelectors();
    });
    $("#ng-players").addEventListener("change", renderSeatSelectors);
    for (const radio of document.querySelectorAll("#new-game-form input[name=mode]")) {
      radio.addEventListener("change", renderSeatSelectors);
    }

    $("#scores-button").addEventListener("click", () => { renderScoreSheet(); openDialog($("#score-sheet")); });
    $("#game-over-scores").addEventListener("click", () => { renderScoreSheet(); openDialog($("#score-sheet")); });
    $("#last-trick-button").addEventListener("click", () => { renderLastTrick(); openDialog($("#last-trick")); });
    $("#replay-button").addEventListener("click", () => {
      $("#replay-list").replaceChildren(h("li", {text: "Loading…"}));
      openDialog($("#replay-dialog"));
      listMyGames();
    });
    for (const button of document.querySelectorAll("dialog .close")) {
      button.addEventListener("click", () => button.closest("dialog").close());
    }
    $("#why-toggle").addEventListener("click", () => {
      whyOn = !whyOn;
      $("#why-toggle").setAttribute("aria-pressed", whyOn ? "true" : "false");
      send({type: "why", on: whyOn});
      if (state) renderWhy(state);
    });
    $("#error-dismiss").addEventListener("click", () => { $("#error-banner").hidden = true; });

    $("#pause").addEventListener("click", () => send({type: "control", paused: !(state && state.paused)}));
    $("#step").addEventListener("click", () => send({type: "control", step: true}));
    $("#retry").addEventListener("click", () => send({type: "control", retry: true}));
    const speed = $("#speed");
    speed.addEventListener("input", () => {
      speedDragging = true;
      $("#speed-value").textContent = `${speed.value} ms`;
    });
    speed.addEventListener("change", () => {
      speedDragging = false;
      send({type: "control", bot_delay_ms: Number(speed.value)});
    });
    $("#reveal").addEventListener("change", (event) => send({type: "control", reveal: event.target.checked}));
    $("#start").addEventListener("click", () => send({type: "start"}));
    $("#close-lobby").addEventListener("click", () => send({type: "control", lobby_open: false}));
    $("#lobby-naming").addEventListener("submit", (event) => {
      event.preventDefault();
      const name = $("#lobby-name").value.trim();
      if (!name) return;
      rememberName(name);
      send({type: "name", name});
    });
    $("#copy-link").addEventListener("click", () => {
      const link = $("#share-link");
      const selectIt = () => {
        const range = document.createRange();
        range.selectNodeContents(link);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        document.execCommand("copy");
      };
      if (navigator.clipboard) navigator.clipboard.writeText(link.textContent).catch(selectIt);
      else selectIt();
      $("#copy-link").textContent = "Copied";
      setTimeout(() => { $("#copy-link").textContent = "Copy"; }, 1500);
    });

    const seekTo = (move) => {
      if (!state || !state.replay) return;
      seek(Math.max(0, Math.min(state.replay.moves, move)));
    };
    $("#replay-prev").addEventListener("click", () => seekTo(state.replay.move - 1));
    $("#replay-next").addEventListener("click", () => seekTo(state.replay.move + 1));
    $("#replay-start").addEventListener("click", () => seekTo(0));
    $("#replay-end").addEventListener("click", () => seekTo(state.replay.moves));
    $("#replay-seek").addEventListener("input", (event) => seekTo(Number(event.target.value)));
    $("#replay-game").addEventListener("change", (event) => {
      const index = Number(event.target.value);
      if (replaySource) replaySource.index = index;
      send({type: "seek", index, move: 0});
    });
    $("#replay-close").addEventListener("click", () => {
      leaveReplayState();
      render();
      const stored = readJSON(STORE_GAME);
      if (current) join(current.table, current.token);
      else if (stored && stored.table) join(stored.table, stored.token);
      else openNewGame();
    });
    $("#replay-file").addEventListener("change", (event) => {
      const file = event.target.files && event.target.files[0];
      if (!file) return;
      const reader = new FileReader();
      reader.addEventListener("load", () => openReplay({content: String(reader.result), index: 0}));
      reader.addEventListener("error", () => showError(`Cannot read ${file.name}.`));
      reader.readAsText(file);
      event.target.value = "";
    });

    document.addEventListener("keydown", (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey || typing(event.target) || !state) return;
      if (/^[0-9]$/.test(event.key) && state.bidding) {
        const option = state.bidding.options.find((o) => o.bid === Number(event.key));
        if (option && !option.forbidden) act(option.action);
        else if (option) $("#hand-hint").textContent = `You may not bid ${option.bid}: ${state.bidding.forbidden_reason}.`;
        event.preventDefault();
      } else if (state.mode === "replay" && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {
        seekTo(state.replay.move + (event.key === "ArrowLeft" ? -1 : 1));
        event.preventDefault();
      }
    });
  }

  wire();
  render();
  connect();
})();
