open Httpz

let size = 65536
let max_request_line = 8192

type t = {
  fd : int;
  buf : Bigstring.t;
  mutable len : int;
  time : Bigstring.t; (* the formatted time of [time_s] *)
  mutable time_s : int;
}

let create ~fd =
  {
    fd;
    buf = Bigstring.create (if fd >= 0 then size else 0);
    len = 0;
    time = Bigstring.create 28;
    time_s = -1;
  }

let enabled t = t.fd >= 0

let pending t = t.len > 0

let flush t =
  let off = ref 0 in
  while !off < t.len do
    let n = Syscall.write t.fd t.buf !off (t.len - !off) in
    if n > 0 then off := !off + n
    else if n = - Syscall.eintr then ()
    else off := t.len (* lost: never let the log stop the server *)
  done;
  t.len <- 0

let reopen t path =
  if t.fd < 0 then Error "no access log"
  else
    match Unix.openfile path [ Unix.O_WRONLY; Unix.O_APPEND; Unix.O_CREAT; Unix.O_CLOEXEC ] 0o644 with
    | exception Unix.Unix_error (e, _, _) -> Error (path ^ ": " ^ Unix.error_message e)
    | fd ->
        flush t;
        (* The new file takes the old one's descriptor number: whoever
           holds [t.fd] (every worker has its own) writes to the new file. *)
        Unix.dup2 ~cloexec:true fd (Syscall.unix_of_fd t.fd);
        Unix.close fd;
        Ok ()
let hex = "0123456789ABCDEF"

let line t ~now ~peer ~peer_len ~src ~req_off ~req_len ~status ~bytes =
  if t.fd >= 0 then begin
    let req_len = if req_len > max_request_line then max_request_line else req_len in
    (* Worst case: every request byte escaped to 4. *)
    let need = 64 + 46 + 28 + (4 * (if req_len > 0 then req_len else 0)) + 40 in
    if t.len + need > size then flush t;
    let b = t.buf in
    let pos = ref t.len in
    if peer_len > 0 then begin
      Bigstring.blit ~src:peer ~src_off:0 ~dst:b ~dst_off:!pos ~len:peer_len;
      pos := !pos + peer_len
    end
    else pos := Response.write_string b ~off:!pos "-";
    pos := Response.write_string b ~off:!pos " - - ";
    if now <> t.time_s then begin
      ignore (Httpz.Date.write_common_log t.time ~off:0 (if now < 0 then 0 else now) : int);
      t.time_s <- now
    end;
    Bigstring.blit ~src:t.time ~src_off:0 ~dst:b ~dst_off:!pos ~len:28;
    pos := !pos + 28;
    pos := Response.write_string b ~off:!pos " \"";
    if req_len < 0 then pos := Response.write_string b ~off:!pos "-"
    else
      for i = req_off to req_off + req_len - 1 do
        let ch = Bigstring.unsafe_get src i in
        if ch < ' ' || ch > '~' || ch = '"' || ch = '\\' then begin
          let k = Char.code ch in
          Bigstring.unsafe_set b !pos '\\';
          Bigstring.unsafe_set b (!pos + 1) 'x';
          Bigstring.unsafe_set b (!pos + 2) (String.unsafe_get hex (k lsr 4));
          Bigstring.unsafe_set b (!pos + 3) (String.unsafe_get hex (k land 15));
          pos := !pos + 4
        end
        else begin
          Bigstring.unsafe_set b !pos ch;
          incr pos
        end
      done;
    pos := Response.write_string b ~off:!pos "\" ";
    pos := Response.write_int b ~off:!pos status;
    Bigstring.unsafe_set b !pos ' ';
    incr pos;
    if bytes > 0 then pos := Response.write_int b ~off:!pos bytes
    else pos := Response.write_string b ~off:!pos "-";
    Bigstring.unsafe_set b !pos '\n';
    t.len <- !pos + 1
  end
