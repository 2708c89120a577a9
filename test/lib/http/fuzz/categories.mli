(** The deliberate differences between httpz and its oracles, one
    {!category} per section of DIFFERENCES.md (same ids, checked by
    test_fuzz). *)

type pair = {
  oracle : Impl.name;
  input : string;
  hz : Impl.result;      (** httpz's result *)
  o : Impl.result;       (** the oracle's *)
  fields : string list;  (** the facts that differ, or [["verdict"]] *)
}
(** One difference to explain. *)

type action =
  | Explained           (** the difference is this category, nothing more to compare *)
  | Repair of string    (** compare again on this rewritten input *)
  | Normalize of Impl.facts * Impl.facts
      (** httpz's and the oracle's facts with this category's difference
          taken out; what still differs needs another category *)

type category = {
  id : string;
  oracles : Impl.name list;         (** the oracles it applies to *)
  check : pair -> action option;    (** [None]: not this category *)
}

val all : category list
(** In the order they are tried. *)
