open Httpz

type shared = {
  date : Date.Cache.t;
  server_line : string;
  mutable now : int;
  mutable draining : bool;
  empty : Bigstring.t;
  write_buffer : int;
  max_body : int;
  pool : Buffer_pool.t;
}

type state = Free | Reading_head | Reading_body | Writing | Lingering
type response = Idle | Head | Chunked_body | Done
type ext = No_ext | Ext_string | Ext_bigstring | Ext_file
type after = Then_next | Then_body | Then_close
type body = No_body | Body_ready | Body_unread | Body_wanted
type timer = No_timer | Idle_timer | Header_timer | Body_timer | Write_timer | Linger_timer

type t = {
  slot : int;
  sh : shared;
  mutable fd : int;
  mutable state : state;
  mutable timer : timer;
  mutable events : int;
  rbuf : Bigstring.t;
  mutable rpos : int;
  mutable rlen : int;
  mutable body_start : int;
  mutable next_pos : int;
  mutable cpos : int;
  req : Request.t;
  chunked : Chunked.t;
  mutable body_store : Bigstring.t;
  mutable body_src : Bigstring.t;
  mutable body_off : int;
  mutable body_len : int;
  mutable body_need : int;
  mutable body : body;
  mutable body_started : bool;
  mutable body_deadline : int;
  mutable body_credit : int;
  mutable head_req : bool;
  mutable served : int;
  mutable out : Bigstring.t;
  mutable out_limit : int;
  mutable out_len : int;
  mutable out_sent : int;
  mutable resp : response;
  mutable status : Status.t;
  mutable no_content : bool;
  mutable suppress : bool;
  mutable close : bool;
  mutable raw : bool;
  mutable chunks : int;
  mutable ext : ext;
  mutable ext_str : string;
  mutable ext_bs : Bigstring.t;
  mutable ext_stable : bool;
  mutable ext_off : int;
  mutable ext_len : int;
  mutable file_fd : int;
  mutable file_close : bool;
  mutable resp_bytes : int;
  mutable flushed : bool;
  mutable broken : bool;
  mutable held : bool;
  mutable after : after;
  peer : Bigstring.t;
  mutable peer_len : int;
}

let reserve = 256

let body_pool_small = 65536
let body_pool_keep = 16

let create_shared ~server_name ~write_buffer ~max_body =
  if not (Response.is_field_value server_name) then
    invalid_arg "Conn.create_shared: server_name is not a field value";
  {
    date = Date.Cache.create ();
    server_line = "Server: " ^ server_name ^ "\r\n";
    now = 0;
    draining = false;
    empty = Bigstring.create 0;
    write_buffer;
    max_body;
    pool = Buffer_pool.create ~small:body_pool_small ~keep:body_pool_keep;
  }

let create sh ~slot ~read_buffer ~peer =
  let limits =
    { Request.default_limits with max_head = read_buffer; max_content_length = sh.max_body }
  in
  (* The chunked decoder enforces max_body on the decoded size itself. *)
  let chunked = Chunked.create ~max_body:sh.max_body () in
  let rbuf = Bigstring.create read_buffer in
  {
    slot;
    sh;
    fd = -1;
    state = Free;
    timer = No_timer;
    events = 0;
    rbuf;
    rpos = 0;
    rlen = 0;
    body_start = 0;
    next_pos = 0;
    cpos = 0;
    req = Request.create ~limits ();
    chunked;
    body_store = sh.empty;
    body_src = rbuf;
    body_off = 0;
    body_len = 0;
    body_need = 0;
    body = No_body;
    body_started = false;
    body_deadline = 0;
    body_credit = 0;
    head_req = false;
    served = 0;
    out = Bigstring.create (sh.write_buffer + reserve);
    out_limit = sh.write_buffer;
    out_len = 0;
    out_sent = 0;
    resp = Idle;
    status = Status.Ok;
    no_content = false;
    suppress = false;
    close = false;
    raw = false;
    chunks = 0;
    ext = No_ext;
    ext_str = "";
    ext_bs = sh.empty;
    ext_stable = false;
    ext_off = 0;
    ext_len = 0;
    file_fd = -1;
    file_close = false;
    resp_bytes = 0;
    flushed = false;
    broken = false;
    held = false;
    after = Then_next;
    peer = (if peer then Bigstring.create 64 else sh.empty);
    peer_len = 0;
  }

let release_file c =
  if c.file_fd >= 0 && c.file_close then ignore (Syscall.close c.file_fd : int);
  c.file_fd <- -1;
  c.file_close <- false

let shrink_threshold = 1 lsl 20

let reset_response c =
  release_file c;
  c.out_len <- 0;
  c.out_sent <- 0;
  c.resp <- Idle;
  c.status <- Status.Ok;
  c.no_content <- false;
  c.suppress <- false;
  c.raw <- false;
  c.chunks <- 0;
  c.ext <- No_ext;
  (* Drop references so a large body can be collected. *)
  c.ext_str <- "";
  c.ext_bs <- c.sh.empty;
  c.ext_stable <- false;
  c.ext_off <- 0;
  c.ext_len <- 0;
  c.resp_bytes <- 0;
  c.flushed <- false;
  c.after <- Then_next;
  if Bigstring.length c.out > shrink_threshold then begin
    c.out <- Bigstring.create (c.sh.write_buffer + reserve);
    c.out_limit <- c.sh.write_buffer
  end

let ensure_body_store c n =
  let cap = Bigstring.length c.body_store in
  if cap < n then begin
    let pool = c.sh.pool in
    (* Chunked bodies grow: double, so the copies stay linear in the body. *)
    let size = if cap = 0 then n else max n (min (2 * cap) c.sh.max_body) in
    let b = Buffer_pool.take pool (max size 1) in
    if c.body_len > 0 then
      Bigstring.blit ~src:c.body_store ~src_off:0 ~dst:b ~dst_off:0 ~len:c.body_len;
    Buffer_pool.give pool c.body_store;
    c.body_store <- b
  end

let release_body c =
  if Bigstring.length c.body_store > 0 then begin
    Buffer_pool.give c.sh.pool c.body_store;
    c.body_store <- c.sh.empty
  end;
  if c.body_src != c.rbuf then begin
    c.body_src <- c.rbuf;
    c.body_off <- 0;
    c.body_len <- 0
  end

let compact_out c =
  if c.out_sent > 0 then begin
    let n = c.out_len - c.out_sent in
    if n > 0 then Bigstring.blit ~src:c.out ~src_off:c.out_sent ~dst:c.out ~dst_off:0 ~len:n;
    c.out_len <- n;
    c.out_sent <- 0
  end

let grow_out c n =
  compact_out c;
  let cap = Bigstring.length c.out - reserve in
  if cap < n then begin
    let size = ref (if cap < 4096 then 4096 else cap) in
    while !size < n do size := !size * 2 done;
    let b = Bigstring.create (!size + reserve) in
    if c.out_len > 0 then Bigstring.blit ~src:c.out ~src_off:0 ~dst:b ~dst_off:0 ~len:c.out_len;
    c.out <- b;
    c.out_limit <- !size
  end
