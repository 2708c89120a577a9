(** The exact-match half of {!Host_match} and {!Rules}: which of a set of
    strings equals a span of a buffer. Does not allocate. *)

val find_equal :
  string array -> int array -> Httpz.Bigstring.t -> off:int -> len:int -> caseless:bool -> int
(** [find_equal names ids buf ~off ~len ~caseless] is [ids.(i)] for the
    first [names.(i)] equal to [buf.{off .. off+len-1}] (ignoring ASCII
    case when [caseless]), or [-1]. *)
