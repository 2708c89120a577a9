module B = Bigstring

type pool = { size : int; items : B.t array; mutable count : int }

type t = {
  config : H2_config.t;
  head : H2_head.t;
  decoded : B.t;
  response_block : B.t;
  queues : pool;
  blocks : pool;
}

let spare_limit = 64
let none = B.create 0
let pool size = { size; items = Array.make spare_limit none; count = 0 }

let create ?(config = H2_config.default) () =
  let (c : H2_config.t) = config in
  {
    config = c;
    head = H2_head.create ~max_fields:((c.max_header_list_size / 32) + 1);
    decoded = B.create c.max_header_list_size;
    response_block = B.create c.response_header_block_size;
    queues = pool c.pending_size;
    blocks = pool c.max_header_list_size;
  }

let fits t (c : H2_config.t) =
  t.config.max_header_list_size = c.max_header_list_size
  && t.config.pending_size = c.pending_size
  && t.config.response_header_block_size = c.response_header_block_size

let take p =
  if p.count = 0 then B.create p.size
  else begin
    p.count <- p.count - 1;
    let b = Array.unsafe_get p.items p.count in
    Array.unsafe_set p.items p.count none;
    b
  end

let give p b =
  if p.count < spare_limit && B.length b = p.size then begin
    Array.unsafe_set p.items p.count b;
    p.count <- p.count + 1
  end;
  none

let spares p = p.count
