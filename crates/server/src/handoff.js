// A hand-off's live view: the page's frames as they come (OpenClaw's
// screencast format: a 4-byte big-endian header length, a JSON header, the
// JPEG), and what the person does sent back as input events: the mouse,
// the wheel, keys, taps on a phone, pastes and a phone's keyboard. Done
// hands the page back to the agent; Decline refuses.
"use strict";

const here = location.pathname;
const screen = document.getElementById("screen");
const keys = document.getElementById("keys");
const said = (text) => { document.getElementById("said").textContent = text; };
let page = { width: 1, height: 1 };
let frames = 0;
let ended = false;
let drawing = Promise.resolve();

const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${here}/live`);
ws.binaryType = "arraybuffer";

ws.onmessage = (message) => {
  if (typeof message.data === "string") {
    const news = JSON.parse(message.data);
    if (news.type === "ready" || news.type === "meta") {
      document.getElementById("where").textContent = `${news.url}\n${news.title}`;
    } else if (news.type === "ended") {
      finish("This hand-off has ended.");
    } else if (news.type === "error") {
      said(news.error);
    }
    return;
  }
  const length = new DataView(message.data).getUint32(0);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(message.data, 4, length)));
  const jpeg = new Blob([new Uint8Array(message.data, 4 + length)], { type: "image/jpeg" });
  // Frames are drawn in the order they came, each once decoded: the
  // picture never blanks between two.
  drawing = drawing.then(() => createImageBitmap(jpeg)).then((picture) => {
    if (screen.width !== picture.width || screen.height !== picture.height) {
      screen.width = picture.width;
      screen.height = picture.height;
    }
    screen.getContext("2d").drawImage(picture, 0, 0);
    picture.close();
    page = { width: header.cssWidth, height: header.cssHeight };
    frames += 1;
    // What a test or a benchmark reads: how many frames were drawn, and
    // the newest's timestamp.
    screen.dataset.frames = String(frames);
    screen.dataset.ts = String(header.ts ?? "");
  }, () => {});
};

ws.onclose = (event) => {
  if (!ended) said(event.code === 1000 ? "This hand-off has ended." : `The live view closed (${event.reason || event.code}).`);
};

function send(event) {
  if (!ended && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(event));
}

/** Where `event` points on the page, in its CSS pixels. */
function at(event) {
  const box = screen.getBoundingClientRect();
  return {
    x: ((event.clientX - box.left) * page.width) / Math.max(box.width, 1),
    y: ((event.clientY - box.top) * page.height) / Math.max(box.height, 1),
  };
}

function modifiers(event) {
  return (event.altKey ? 1 : 0) | (event.ctrlKey ? 2 : 0) | (event.metaKey ? 4 : 0) | (event.shiftKey ? 8 : 0);
}

const buttons = ["left", "middle", "right"];
let touch = null;
let moving = false;

screen.addEventListener("pointerdown", (event) => {
  event.preventDefault();
  // Where it points is read before the focus, which must not scroll.
  const point = at(event);
  screen.focus({ preventScroll: true });
  if (event.pointerType === "touch") {
    touch = { x: event.clientX, y: event.clientY };
    return;
  }
  send({ type: "mouse", action: "down", ...point, button: buttons[event.button] || "left", clicks: event.detail || 1, modifiers: modifiers(event) });
});

screen.addEventListener("pointerup", (event) => {
  event.preventDefault();
  if (event.pointerType === "touch") {
    // A finger that hardly moved taps; one that moved scrolls.
    if (touch && Math.hypot(event.clientX - touch.x, event.clientY - touch.y) < 10) send({ type: "tap", ...at(event) });
    touch = null;
    return;
  }
  send({ type: "mouse", action: "up", ...at(event), button: buttons[event.button] || "left", clicks: event.detail || 1, modifiers: modifiers(event) });
});

screen.addEventListener("pointermove", (event) => {
  if (event.pointerType === "touch") {
    if (!touch) return;
    const scale = page.height / Math.max(screen.getBoundingClientRect().height, 1);
    send({ type: "wheel", ...at(event), deltaX: (touch.x - event.clientX) * scale, deltaY: (touch.y - event.clientY) * scale });
    touch = { x: event.clientX, y: event.clientY, moved: true };
    return;
  }
  // One move per frame of this screen is enough.
  if (moving) return;
  moving = true;
  const point = at(event);
  const bits = modifiers(event);
  requestAnimationFrame(() => {
    moving = false;
    send({ type: "mouse", action: "move", ...point, modifiers: bits });
  });
});

screen.addEventListener("wheel", (event) => {
  event.preventDefault();
  send({ type: "wheel", ...at(event), deltaX: event.deltaX, deltaY: event.deltaY });
}, { passive: false });

screen.addEventListener("contextmenu", (event) => event.preventDefault());
screen.addEventListener("dragstart", (event) => event.preventDefault());

// Keys pressed while the picture has the focus go to the page; a paste
// (Control or Command and V) arrives as text through the paste event.
screen.addEventListener("keydown", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "v") return;
  event.preventDefault();
  send({ type: "key", action: "down", key: event.key, modifiers: modifiers(event) });
});
screen.addEventListener("keyup", (event) => {
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "v") return;
  event.preventDefault();
  send({ type: "key", action: "up", key: event.key, modifiers: modifiers(event) });
});
document.addEventListener("paste", (event) => {
  if (document.activeElement === keys) return;
  const text = event.clipboardData && event.clipboardData.getData("text/plain");
  if (text) {
    event.preventDefault();
    send({ type: "text", text });
  }
});

// A phone's keyboard: what is typed in the field goes to the page's
// focused element, then the field empties; Enter and Backspace are keys.
keys.addEventListener("input", () => {
  if (keys.value) send({ type: "text", text: keys.value });
  keys.value = "";
});
keys.addEventListener("keydown", (event) => {
  if (event.key === "Enter" || event.key === "Backspace" || event.key === "Tab") {
    event.preventDefault();
    send({ type: "key", action: "down", key: event.key, modifiers: 0 });
    send({ type: "key", action: "up", key: event.key, modifiers: 0 });
  }
});

function finish(text) {
  ended = true;
  for (const button of document.querySelectorAll("button")) button.disabled = true;
  said(text);
}

async function end(done) {
  const response = await fetch(`${here}/end`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ done }),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) {
    said(answer.error || `${response.status} ${response.statusText}`);
    return;
  }
  finish(done ? "Handed back: the agent continues." : "Declined: the agent was told.");
}

document.getElementById("done").addEventListener("click", () => end(true));
document.getElementById("decline").addEventListener("click", () => end(false));
