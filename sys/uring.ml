external setup_raw : int -> int -> int -> int -> int = "httpz_uring_setup"
external exit : unit -> unit = "httpz_uring_exit"

let setup ~entries ~slots ~nbufs ~buf_size = setup_raw entries slots nbufs buf_size

external accept : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_accept_byte" "httpz_uring_accept"
  [@@noalloc]

external recv : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_recv_byte" "httpz_uring_recv"
  [@@noalloc]

external send2 :
  (int[@untagged]) -> (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_send2_byte" "httpz_uring_send2"
  [@@noalloc]

external poll : (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_poll_byte" "httpz_uring_poll"
  [@@noalloc]

external cancel : (int[@untagged]) -> (int[@untagged]) = "httpz_uring_cancel_byte" "httpz_uring_cancel"
  [@@noalloc]


external cancel_fd : (int[@untagged]) -> (int[@untagged])
  = "httpz_uring_cancel_fd_byte" "httpz_uring_cancel_fd"
  [@@noalloc]

external submit_wait_raw : int -> int = "httpz_uring_submit_wait"

let submit_wait ~timeout_ns = submit_wait_raw timeout_ns

external reap : int array -> int array -> int array -> (int[@untagged])
  = "httpz_uring_reap_byte" "httpz_uring_reap"
  [@@noalloc]

external copy_buf :
  (int[@untagged]) -> (int[@untagged]) -> Httpz.Bigstring.t -> (int[@untagged]) -> (int[@untagged]) ->
  (int[@untagged])
  = "httpz_uring_copy_buf_byte" "httpz_uring_copy_buf"
  [@@noalloc]

external recycle : (int[@untagged]) -> (int[@untagged]) = "httpz_uring_recycle_byte" "httpz_uring_recycle"
  [@@noalloc]

(* include/uapi/linux/io_uring.h *)
let more = 1 lsl 1 (* IORING_CQE_F_MORE *)
let has_buffer = 1 lsl 0 (* IORING_CQE_F_BUFFER *)
let buffer_id flags = flags lsr 16 (* IORING_CQE_BUFFER_SHIFT *)
let pollin = 0x001
let pollout = 0x004
