type t = int

let none = 0

external create : bool -> int -> int -> int = "httpz_zstream_create"
external free_raw : int -> unit = "httpz_zstream_free"
external reset : t -> unit = "httpz_zstream_reset" [@@noalloc]

external step_raw :
  t -> Httpz.Bigstring.t -> int -> int -> Httpz.Bigstring.t -> int -> int -> int -> int
  = "httpz_zstream_step_byte" "httpz_zstream_step"
  [@@noalloc]

let deflater ~wbits ~level = create true wbits level
let inflater ~wbits = create false wbits 0
let free t = if t <> none then free_raw t
let no_flush = 0
let sync_flush = 2

type status = Ok | Stream_end | No_progress | Error

let step t src ~off ~len dst ~dst_off ~dst_len ~flush = step_raw t src off len dst dst_off dst_len flush

let status r = match r land 3 with 0 -> Ok | 1 -> Stream_end | 2 -> No_progress | _ -> Error
let used r = (r lsr 2) land 0x3FFF_FFFF
let written r = r lsr 32
