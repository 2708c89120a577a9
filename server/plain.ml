open Conn

type flushed = Flushed | Blocked | Dead

(* Bytes one connection may send per readiness before the loop turns to the
   others: a client on loopback reads a large file as fast as we send it. *)
let write_budget = 1 lsl 20

let write c =
  let result = ref (-1) in
  (* The connection closes after this output: its last bytes go out with
     MSG_MORE and wait for the FIN (the backend's close), so the client
     gets response and FIN in one packet and acknowledges both at once. *)
  let last = if Connection.last c then 1 else 0 in
  (* No budget for a non-stable bigstring: yielding would mean copying it
     (Connection.blocked); only a full socket makes that necessary. *)
  let budget = ref (if c.ext = Ext_bigstring && not c.ext_stable then max_int else write_budget) in
  while !result < 0 do
    let out_rem = c.out_len - c.out_sent in
    if out_rem = 0 && c.ext_len = 0 then result := 0
    else if !budget <= 0 then result := 1
    else begin
      let n =
        match c.ext with
        | Ext_string when c.ext_len > 0 ->
            let len = if c.ext_len < !budget then c.ext_len else !budget in
            c.held <- last = 1;
            Syscall.sendv_string c.fd c.out c.out_sent out_rem c.ext_str c.ext_off len last
        | Ext_bigstring when c.ext_len > 0 ->
            let len = if c.ext_len < !budget then c.ext_len else !budget in
            c.held <- last = 1;
            Syscall.sendv2 c.fd c.out c.out_sent out_rem c.ext_bs c.ext_off len last
        | Ext_file when out_rem > 0 -> Syscall.send c.fd c.out c.out_sent out_rem 1
        | Ext_file ->
            let len = if c.ext_len < !budget then c.ext_len else !budget in
            Syscall.sendfile c.fd c.file_fd c.ext_off len
        | _ ->
            c.held <- last = 1;
            Syscall.send c.fd c.out c.out_sent out_rem last
      in
      if n > 0 then begin
        budget := !budget - n;
        Connection.advance c n
      end
      else if n = - Syscall.eintr then ()
      else if n = - Syscall.eagain then result := 1
      else
        (* 0 from sendfile: the file is shorter than the Content-Length
           sent; the response cannot be completed. Anything else (EPIPE,
           ECONNRESET, …): the client is gone. Either way, close quietly. *)
        result := 2
    end
  done;
  match !result with 0 -> Flushed | 1 -> Blocked | _ -> Dead

let write_now c =
  let r = Syscall.write c.fd c.out c.out_sent (c.out_len - c.out_sent) in
  if r > 0 then begin
    c.out_sent <- c.out_sent + r;
    c.flushed <- true
  end
  else if r <> - Syscall.eagain && r <> - Syscall.eintr then c.broken <- true

let read c = Syscall.read c.fd c.in_buf c.in_off c.in_len
