(* A chat room: `chat.exe -p PORT [--tls-cert F --tls-key F] [--io
   epoll|uring]` serves a small page at / whose script connects to /ws;
   every text message a client sends goes to every connected client.

   A broadcast builds the message once, in one bigstring, and gives it to
   every connection with Ws.send_shared: over plain TCP each connection
   adds only its frame header and sends the payload from that one buffer
   (TLS and permessage-deflate must copy it). A client that does not read
   is disconnected when its queue passes max_send_buffer; the others keep
   receiving. One worker: the room lives in this process. *)

open Httpz_server

let page =
  {|<!doctype html>
<meta charset="utf-8"><title>httpz chat</title>
<style>body{font:16px sans-serif;max-width:40em;margin:2em auto}#log{height:20em;overflow:auto;border:1px solid #ccc;padding:.5em}</style>
<h1>httpz chat</h1>
<div id="log"></div>
<form id="f"><input id="m" autocomplete="off" autofocus size="50"> <button>Send</button></form>
<script>
const log = document.getElementById("log");
const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
function show(t) { const p = document.createElement("div"); p.textContent = t; log.appendChild(p); log.scrollTop = log.scrollHeight; }
ws.onopen = () => show("(connected)");
ws.onclose = (e) => show("(closed: " + e.code + ")");
ws.onmessage = (e) => show(e.data);
document.getElementById("f").onsubmit = (e) => {
  e.preventDefault();
  const m = document.getElementById("m");
  if (m.value) ws.send(m.value);
  m.value = "";
};
</script>
|}

(* The room: every open connection, by id. *)
let members : (int, Ws.t) Hashtbl.t = Hashtbl.create 64

let broadcast text =
  let msg = Httpz.Bigstring.of_string text in
  let len = Httpz.Bigstring.length msg in
  Hashtbl.iter (fun _ c -> Ws.send_shared c Ws.Text msg ~off:0 ~len) members

let name c = Printf.sprintf "#%d" (Ws.id c)

let on_message c kind buf ~off ~len =
  match kind with
  | Ws.Text -> broadcast (name c ^ ": " ^ Httpz.Bigstring.sub_string buf ~off ~len)
  | Ws.Binary -> Ws.close c ~code:Httpz.Ws_close.unsupported_data ~reason:"text only"

let on_close c _code =
  if Hashtbl.mem members (Ws.id c) then begin
    Hashtbl.remove members (Ws.id c);
    broadcast (name c ^ " left")
  end

(* The page's own script connects from the same origin, which the default
   [origins] (Ws.same_origin) accepts; another site's page gets 403. *)
let config = { Ws.default_config with max_message = 64 * 1024; max_send_buffer = 1 lsl 20 }

let join ctx =
  if Ws.accept ~config ctx { Ws.on_message; on_close } then
    (* The connection exists from the 101 on: it is a member at once. *)
    match Ws.of_ctx ctx with
    | Some c ->
        Hashtbl.replace members (Ws.id c) c;
        broadcast (name c ^ " joined")
    | None -> ()

let index ctx =
  Ctx.start ctx Httpz.Status.Ok;
  Ctx.header ctx Httpz.Header_name.Content_type "text/html; charset=utf-8";
  Ctx.body_string ctx page

let routes =
  let r = Route.router () in
  Route.get r "/" index;
  Route.get r "/ws" join;
  Route.compile r

let () =
  let port = ref 8080 and cert = ref "" and key = ref "" and io = ref Server.default_config.io in
  Arg.parse
    [ ("-p", Arg.Set_int port, "PORT port (default 8080)");
      ("--tls-cert", Arg.Set_string cert, "FILE serve https:// and wss:// with this PEM certificate chain");
      ("--tls-key", Arg.Set_string key, "FILE and this PEM key");
      ("--io", Arg.Symbol ([ "uring"; "epoll" ], fun s -> io := if s = "epoll" then Server.Epoll else Server.Uring),
       " the backend (default uring)") ]
    (fun _ -> ()) "chat.exe [-p PORT] [--tls-cert FILE --tls-key FILE] [--io uring|epoll]";
  let tls = if !cert = "" then None else Some (Server.tls ~cert_file:!cert ~key_file:!key) in
  exit (Server.run { Server.default_config with port = !port; workers = 1; tls; io = !io } (Route.handler routes))
