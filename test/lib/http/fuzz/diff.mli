(** The comparison: httpz against itself (self-checks) and against one
    oracle at a time, with every difference either explained by a
    {!Categories.category} or reported as a {!finding}. *)

type oracle = { name : Impl.name; run : string -> Impl.result }
(** An implementation to compare httpz with; [run] is its verdict on an
    input (used again on the inputs the comparison derives). *)

type finding = {
  kind : string;    (** ["undocumented:h11"], ["self:garbage"], … *)
  input : string;   (** the input it is about (a derived one, possibly) *)
  detail : string;  (** both verdicts, the facts that differ, how the input was derived *)
}

val httpz_checked : split:int -> string -> Impl.result * finding list
(** [httpz_checked ~split s] is httpz's result on [s] and the failures of
    its self-checks: no exception; after [Complete], [head_length <= len]
    and every span inside the head; the same result with other garbage
    around [s] at other offsets; [s.[0 .. split)] then [s] on one state
    agrees with the one-shot parse (see DIFFERENCES.md for the two
    documented resumption properties); and the default limits differ only
    by [content_too_large]. *)

type report = {
  hits : string list;         (** ["oracle:category"] for every explained difference *)
  findings : finding list;    (** the unexplained ones *)
}

val compare :
  ?depth:int -> ?via:string list -> oracle -> hz_run:(string -> Impl.result) ->
  string -> Impl.result -> Impl.result -> report
(** [compare oracle ~hz_run input hz o] compares httpz's result [hz] with
    the oracle's [o] on [input]. Both refusing agree whatever the reasons;
    a refusal against a [Partial] is compared again on the input closed by
    an empty line; any other difference goes to the categories, whose
    repairs are compared again from scratch ([hz_run] and [oracle.run] on
    the repaired input). *)
