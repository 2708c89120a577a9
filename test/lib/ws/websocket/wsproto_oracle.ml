(* One batch through Python's wsproto (Debian python3-wsproto) and hashlib:
   every command is written to a file, one Python process answers them
   all, one line per command. *)

let script = {|
import sys, hashlib, base64
from wsproto.frame_protocol import FrameProtocol, ParseFailed, Opcode

def parse(client, data):
    fp = FrameProtocol(client=client, extensions=[])
    out, msg, op = [], bytearray(), None
    try:
        fp.receive_bytes(data)
        for f in fp.received_frames():
            if f.opcode == Opcode.CLOSE:
                code, reason = f.payload
                out.append("close:%d:%s" % (int(code), reason.encode().hex()))
            elif f.opcode in (Opcode.PING, Opcode.PONG):
                out.append("%s:%s" % (f.opcode.name.lower(), bytes(f.payload).hex()))
            else:
                if op is None: op = f.opcode
                p = f.payload
                msg += p.encode() if isinstance(p, str) else p
                if f.message_finished:
                    out.append("%s:%s" % (op.name.lower(), bytes(msg).hex()))
                    msg, op = bytearray(), None
    except ParseFailed as e:
        out.append("error:%d" % int(e.code))
    return " ".join(out) if out else "-"

def gen(spec):
    fp = FrameProtocol(client=True, extensions=[])
    out = b""
    for item in spec.split(";"):
        kind, hx, fin = item.split(":")
        data = bytes.fromhex(hx)
        if kind == "T": out += fp.send_data(data.decode(), fin == "1")
        elif kind == "B": out += fp.send_data(data, fin == "1")
        elif kind == "P": out += fp.ping(data)
        elif kind == "O": out += fp.pong(data)
        elif kind == "C": out += fp.close(int.from_bytes(data[:2], "big"), data[2:].decode())
    return out.hex()

for line in sys.stdin:
    cmd, _, arg = line.rstrip("\n").partition(" ")
    if cmd == "parse_server": print(parse(False, bytes.fromhex(arg)))
    elif cmd == "parse_client": print(parse(True, bytes.fromhex(arg)))
    elif cmd == "gen": print(gen(arg))
    elif cmd == "sha1": print(hashlib.sha1(bytes.fromhex(arg)).hexdigest())
    elif cmd == "accept":
        k = bytes.fromhex(arg) + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
        print(base64.b64encode(hashlib.sha1(k).digest()).decode())
    else: print("?")
    sys.stdout.flush()
|}

let interpreters () =
  (match Sys.getenv_opt "HTTPZ_PYTHON" with Some p -> [ p ] | None -> [])
  @ [ "/usr/bin/python3"; "python3" ]

let can_import py =
  Sys.command
    (Filename.quote_command py [ "-c"; "import wsproto" ] ~stdout:"/dev/null" ~stderr:"/dev/null")
  = 0

let hex s = String.concat "" (List.init (String.length s) (fun i -> Printf.sprintf "%02x" (Char.code s.[i])))

let unhex h =
  String.init (String.length h / 2) (fun i -> Char.chr (int_of_string ("0x" ^ String.sub h (2 * i) 2)))

(* [run commands] is Python's answer to each command, in order. *)
let run commands =
  match List.find_opt can_import (interpreters ()) with
  | None ->
      failwith "no python3 can import wsproto: install Debian's python3-wsproto (scripts/deps.sh test)"
  | Some py ->
      let script_file = Filename.temp_file "httpz_wsproto" ".py" in
      let input = Filename.temp_file "httpz_wsproto" ".in" in
      let output = Filename.temp_file "httpz_wsproto" ".out" in
      let write f s = let oc = open_out_bin f in output_string oc s; close_out oc in
      write script_file script;
      write input (String.concat "" (List.map (fun c -> c ^ "\n") commands));
      let rc =
        Sys.command (Filename.quote_command py [ script_file ] ~stdin:input ~stdout:output)
      in
      let ic = open_in_bin output in
      let lines = List.init (List.length commands) (fun _ -> try input_line ic with End_of_file -> "<eof>") in
      close_in ic;
      List.iter (fun f -> try Sys.remove f with Sys_error _ -> ()) [ script_file; input; output ];
      if rc <> 0 then failwith (Printf.sprintf "wsproto oracle exited with %d" rc);
      lines
