// Node's `ws` peer of the WebSocket benchmark: echoes every message with its
// own type, without permessage-deflate (as the other servers are run).
'use strict';
const { WebSocketServer } = require('ws');
const port = Number(process.argv[2] || 9002);
const wss = new WebSocketServer({ host: '127.0.0.1', port, perMessageDeflate: false });
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  ws.on('error', () => {});
});
wss.on('listening', () => console.log(`listening ${port}`));
