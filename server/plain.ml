(* The plain-TCP transport: Output's walk over send, sendmsg and
   sendfile, one system call per step. *)

open Slot

(* -errno of a write, in the walk's terms. *)
let result n =
  if n > 0 then n
  else if n = - Syscall.eintr then 0
  else if n = - Syscall.eagain then Output.would_block
  else Output.gone

let flag more = if more then 1 else 0

include Output.Walk (struct
  let budget = 1 lsl 20
  let holds_last = true
  let head c ~more = result (Syscall.send c.fd c.out c.out_sent (c.out_len - c.out_sent) (flag more))

  let head_string c ~len ~more =
    result (Syscall.sendv_string c.fd c.out c.out_sent (c.out_len - c.out_sent) c.ext_str c.ext_off len (flag more))

  let head_bigstring c ~len ~more =
    result (Syscall.sendv2 c.fd c.out c.out_sent (c.out_len - c.out_sent) c.ext_bs c.ext_off len (flag more))

  (* 0 from sendfile: the file is shorter than the Content-Length sent;
     the response cannot be completed. *)
  let file c ~len =
    let n = Syscall.sendfile c.fd c.file_fd c.ext_off len in
    if n = 0 then Output.gone else result n

  let gathered c ~more =
    let g = c.gather in
    result
      (Syscall.sendv_gather c.fd c.out c.out_sent c.out_len g.bufs g.meta g.first g.count (flag more))

  (* The kernel takes what it is given or nothing: no bytes wait here. *)
  let unsent _ = 0
  let send_unsent _ = 0
end)

let read c = Syscall.read c.fd c.in_buf c.in_off c.in_len
