;; A JSON scan in WebAssembly, reading string contents sixteen bytes at a time with SIMD. It
;; accepts exactly what JSON.parse(body.toString('utf8')) accepts; wasm-scanner.ts is its
;; JavaScript side and says why it exists. Compiled by `npm run build:wasm` into scanner-binary.ts (a test checks the two agree).
;;
;; Memory layout for a body of n bytes: the body at 0..n, sixteen zero bytes after it (written by
;; $scan: every read past the body meets a zero, which no rule accepts, so no bound is checked but
;; the string's), then the stack of open containers, one byte each (1 object, 2 array), from
;; $stack = n + 16. The caller makes the memory at least 2n + 32 bytes.
;;
;; For each member of the outermost object it calls $member with the key's span (from its opening
;; quote to just past its closing one), the value's span (its first byte to just past its last) and
;; how many object members the value holds at any depth, as written. It counts every object member
;; of the body ($keys): JSON.parse keeps one per distinct key of an object, so a caller that parses
;; a part and finds fewer knows a key in it is written twice (a parser keeping the first value
;; would read another request than the one Relay checked), whatever the key's spelling.
;;
;; It also notes, for the whole body, whether any string (a key or a value, at any depth) is one of
;; up to four watched texts of at most sixteen bytes (set by $watch; bit k of $seen for text k), and
;; whether any string holds a \u escape of a character from U+0040 to U+007F ($escapedLetter): a
;; watched text so written is not compared, so the caller reads such a body in full.
;;
;; And it notes whether some object, at any depth, may be a Responses reasoning item that names a
;; stored item by its id alone ($reasoningById): a member `"type":"reasoning"` and an `"id"` that is
;; a non-empty string, without exactly one `"encrypted_content"` member, a non-empty string. Keys
;; and "reasoning" are compared as written (an escaped spelling sets $escapedLetter); a key written
;; twice counts each time, so the note holds whichever of the two a parser keeps. Each open
;; object's notes are bits of its stack byte (above the kind's two). The key last read stays in
;; $keyKind past its value: a string it reaches later is an array's element, noted in the array's
;; byte, which nothing reads.
(module
  (import "scan" "member" (func $member (param i32 i32 i32 i32 i32)))
  (memory (export "memory") 16)

  (global $n (mut i32) (i32.const 0))
  ;; The outermost object's member being read: its key's span and where its value starts.
  (global $pending (mut i32) (i32.const 0))
  (global $keyStart (mut i32) (i32.const 0))
  (global $keyEnd (mut i32) (i32.const 0))
  (global $valueStart (mut i32) (i32.const 0))
  ;; Object members read so far, at any depth, and their count when the pending member's value began.
  (global $keys (export "keys") (mut i32) (i32.const 0))
  (global $valueKeys (mut i32) (i32.const 0))

  ;; Watched texts: each one's bytes and a mask of its length, zero past it; bit L of $lengths is
  ;; set when some text is L bytes long, so most strings are passed by one test.
  (global $lengths (mut i32) (i32.const 0))
  (global $text0 (mut v128) (v128.const i64x2 0 0))
  (global $text1 (mut v128) (v128.const i64x2 0 0))
  (global $text2 (mut v128) (v128.const i64x2 0 0))
  (global $text3 (mut v128) (v128.const i64x2 0 0))
  (global $mask0 (mut v128) (v128.const i64x2 0 0))
  (global $mask1 (mut v128) (v128.const i64x2 0 0))
  (global $mask2 (mut v128) (v128.const i64x2 0 0))
  (global $mask3 (mut v128) (v128.const i64x2 0 0))
  (global $len0 (mut i32) (i32.const 0))
  (global $len1 (mut i32) (i32.const 0))
  (global $len2 (mut i32) (i32.const 0))
  (global $len3 (mut i32) (i32.const 0))
  (global $seen (export "seen") (mut i32) (i32.const 0))
  (global $escapedLetter (export "escapedLetter") (mut i32) (i32.const 0))
  (global $reasoningById (export "reasoningById") (mut i32) (i32.const 0))
  ;; The key just read, when its value is noted: 1 "type", 2 "id", 3 "encrypted_content", 0 any other.
  (global $keyKind (mut i32) (i32.const 0))

  ;; Watches text $slot (0-3): $len bytes (1-16), given as four little-endian words.
  (func (export "watch") (param $slot i32) (param $len i32) (param $a i32) (param $b i32) (param $c i32) (param $d i32)
    (local $text v128)
    (local $mask v128)
    (local.set $text
      (i32x4.replace_lane 3
        (i32x4.replace_lane 2
          (i32x4.replace_lane 1 (i32x4.splat (local.get $a)) (local.get $b))
          (local.get $c))
        (local.get $d)))
    ;; byte i of the mask is 0xff when i < $len
    (local.set $mask
      (i8x16.lt_u (v128.const i8x16 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15) (i8x16.splat (local.get $len))))
    (global.set $lengths (i32.or (global.get $lengths) (i32.shl (i32.const 1) (local.get $len))))
    (if (i32.eq (local.get $slot) (i32.const 0)) (then (global.set $text0 (local.get $text)) (global.set $mask0 (local.get $mask)) (global.set $len0 (local.get $len))))
    (if (i32.eq (local.get $slot) (i32.const 1)) (then (global.set $text1 (local.get $text)) (global.set $mask1 (local.get $mask)) (global.set $len1 (local.get $len))))
    (if (i32.eq (local.get $slot) (i32.const 2)) (then (global.set $text2 (local.get $text)) (global.set $mask2 (local.get $mask)) (global.set $len2 (local.get $len))))
    (if (i32.eq (local.get $slot) (i32.const 3)) (then (global.set $text3 (local.get $text)) (global.set $mask3 (local.get $mask)) (global.set $len3 (local.get $len)))))

  ;; 1 when $bytes, masked, are the text.
  (func $is (param $bytes v128) (param $text v128) (param $mask v128) (result i32)
    (i8x16.all_true (i8x16.eq (v128.and (local.get $bytes) (local.get $mask)) (local.get $text))))

  ;; A string's content is the $len bytes at $from: sets the bit of each watched text it is.
  (func $note (param $from i32) (param $len i32)
    (local $bytes v128)
    ;; past the body lie its sixteen zero bytes and the stack, so sixteen bytes can always be read
    (local.set $bytes (v128.load align=1 (local.get $from)))
    (if (i32.eq (local.get $len) (global.get $len0))
      (then (if (call $is (local.get $bytes) (global.get $text0) (global.get $mask0)) (then (global.set $seen (i32.or (global.get $seen) (i32.const 1)))))))
    (if (i32.eq (local.get $len) (global.get $len1))
      (then (if (call $is (local.get $bytes) (global.get $text1) (global.get $mask1)) (then (global.set $seen (i32.or (global.get $seen) (i32.const 2)))))))
    (if (i32.eq (local.get $len) (global.get $len2))
      (then (if (call $is (local.get $bytes) (global.get $text2) (global.get $mask2)) (then (global.set $seen (i32.or (global.get $seen) (i32.const 4)))))))
    (if (i32.eq (local.get $len) (global.get $len3))
      (then (if (call $is (local.get $bytes) (global.get $text3) (global.get $mask3)) (then (global.set $seen (i32.or (global.get $seen) (i32.const 8))))))))

  ;; An open object's stack byte: bit 2 a "type" of "reasoning", bit 3 a non-empty "id", bit 4 an
  ;; "encrypted_content", bit 5 a second one, bit 6 a non-empty string one.
  (func $mark (param $at i32) (param $bits i32)
    (i32.store8 (local.get $at) (i32.or (i32.load8_u (local.get $at)) (local.get $bits))))

  ;; A string value of $len bytes at $from, of a member $kind names, in the object whose byte is at $at.
  (func $noteString (param $at i32) (param $kind i32) (param $from i32) (param $len i32)
    (if (i32.eq (local.get $kind) (i32.const 1))
      (then
        (if (i32.eq (local.get $len) (i32.const 9))
          (then
            ;; "reasonin" as a little-endian word, then "g"
            (if (i32.and
                  (i64.eq (i64.load align=1 (local.get $from)) (i64.const 0x6e696e6f73616572))
                  (i32.eq (i32.load8_u offset=8 (local.get $from)) (i32.const 0x67)))
              (then (call $mark (local.get $at) (i32.const 4))))))
        (return)))
    ;; "id" (2) or "encrypted_content" (3), non-empty
    (if (local.get $len)
      (then (call $mark (local.get $at) (select (i32.const 8) (i32.const 64) (i32.eq (local.get $kind) (i32.const 2)))))))

  (func $isSpace (param $c i32) (result i32)
    (i32.or
      (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x0a)))
      (i32.or (i32.eq (local.get $c) (i32.const 0x0d)) (i32.eq (local.get $c) (i32.const 0x09)))))

  (func $isDigit (param $c i32) (result i32)
    (i32.lt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 10)))

  (func $isHex (param $c i32) (result i32)
    (i32.or
      (call $isDigit (local.get $c))
      ;; a-f or A-F: lower-cased by setting bit 0x20
      (i32.lt_u (i32.sub (i32.or (local.get $c) (i32.const 0x20)) (i32.const 0x61)) (i32.const 6))))

  (func $skipSpace (param $i i32) (result i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (call $isSpace (i32.load8_u (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  ;; From just past an opening quote to just past the closing one; -1 when the string is malformed
  ;; or unterminated.
  (func $skipString (param $i i32) (result i32)
    (local $base i32) ;; where the sixteen bytes of $stops begin
    (local $stops i32)
    (local $v v128)
    (local $c i32)
    (local $e i32)
    (local $from i32)
    (local $len i32)
    (local.set $from (local.get $i))
    (local.set $base (local.get $i))
    (loop $block
      ;; Sixteen bytes a turn: where each is `"`, `\` or below 0x20 (unsigned, so bytes past 0x7f
      ;; pass), as one bit each.
      (local.set $v (v128.load align=1 (local.get $base)))
      (local.set $stops
        (i8x16.bitmask
          (v128.or
            (v128.or
              (i8x16.eq (local.get $v) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))
              (i8x16.eq (local.get $v) (v128.const i8x16 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c 0x5c)))
            (i8x16.lt_u (local.get $v) (v128.const i8x16 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20 0x20)))))
      (if (i32.eqz (local.get $stops))
        (then
          (local.set $base (i32.add (local.get $base) (i32.const 16)))
          (br $block)))
      ;; Each stop in these sixteen bytes in turn, without reading them again.
      (loop $stop
        (local.set $i (i32.add (local.get $base) (i32.ctz (local.get $stops))))
        ;; The zeros after the body stop every run that reaches them.
        (if (i32.ge_u (local.get $i) (global.get $n)) (then (return (i32.const -1))))
        (local.set $c (i32.load8_u (local.get $i)))
        (if (i32.eq (local.get $c) (i32.const 0x22))
          (then
            (local.set $len (i32.sub (local.get $i) (local.get $from)))
            (if (i32.and (global.get $lengths) (i32.shl (i32.const 1) (local.get $len)))
              (then (call $note (local.get $from) (local.get $len))))
            (return (i32.add (local.get $i) (i32.const 1)))))
        ;; a control character
        (if (i32.ne (local.get $c) (i32.const 0x5c)) (then (return (i32.const -1))))
        (local.set $e (i32.load8_u offset=1 (local.get $i)))
        (block $escaped ;; $i just past the escape
          (if (i32.eq (local.get $e) (i32.const 0x75)) ;; \u and four hex digits
            (then
              (if (i32.eqz
                    (i32.and
                      (i32.and (call $isHex (i32.load8_u offset=2 (local.get $i))) (call $isHex (i32.load8_u offset=3 (local.get $i))))
                      (i32.and (call $isHex (i32.load8_u offset=4 (local.get $i))) (call $isHex (i32.load8_u offset=5 (local.get $i))))))
                (then (return (i32.const -1))))
              ;; \u0040 to \u007f: the first two digits 0, the third 4 to 7
              (if (i32.and
                    (i32.eq (i32.load16_u offset=2 (local.get $i)) (i32.const 0x3030))
                    (i32.lt_u (i32.sub (i32.load8_u offset=4 (local.get $i)) (i32.const 0x34)) (i32.const 4)))
                (then (global.set $escapedLetter (i32.const 1))))
              (local.set $i (i32.add (local.get $i) (i32.const 6)))
              (br $escaped)))
          ;; " \ / b f n r t
          (if (i32.or
                (i32.or
                  (i32.or (i32.eq (local.get $e) (i32.const 0x22)) (i32.eq (local.get $e) (i32.const 0x5c)))
                  (i32.or (i32.eq (local.get $e) (i32.const 0x2f)) (i32.eq (local.get $e) (i32.const 0x62))))
                (i32.or
                  (i32.or (i32.eq (local.get $e) (i32.const 0x66)) (i32.eq (local.get $e) (i32.const 0x6e)))
                  (i32.or (i32.eq (local.get $e) (i32.const 0x72)) (i32.eq (local.get $e) (i32.const 0x74)))))
            (then
              (local.set $i (i32.add (local.get $i) (i32.const 2)))
              (br $escaped)))
          (return (i32.const -1)))
        ;; The stops of these sixteen bytes before $i are read (the escaped byte among them).
        (if (i32.lt_u (i32.sub (local.get $i) (local.get $base)) (i32.const 16))
          (then
            (local.set $stops (i32.and (local.get $stops) (i32.shl (i32.const -1) (i32.sub (local.get $i) (local.get $base)))))
            (br_if $stop (local.get $stops))
            (local.set $base (i32.add (local.get $base) (i32.const 16))))
          (else (local.set $base (local.get $i))))
        (br $block)))
    (unreachable))

  ;; A number as RFC 8259 writes it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; -1 when malformed.
  (func $skipDigits (param $i i32) (result i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (call $isDigit (i32.load8_u (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  (func $skipNumber (param $i i32) (result i32)
    (local $c i32)
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2d)) (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.eq (local.get $c) (i32.const 0x30))
      (then (local.set $i (i32.add (local.get $i) (i32.const 1))))
      (else
        (if (i32.eqz (call $isDigit (local.get $c))) (then (return (i32.const -1))))
        (local.set $i (call $skipDigits (local.get $i)))))
    (if (i32.eq (i32.load8_u (local.get $i)) (i32.const 0x2e))
      (then
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (if (i32.eqz (call $isDigit (i32.load8_u (local.get $i)))) (then (return (i32.const -1))))
        (local.set $i (call $skipDigits (local.get $i)))))
    (local.set $c (i32.load8_u (local.get $i)))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0x65)) (i32.eq (local.get $c) (i32.const 0x45)))
      (then
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $c (i32.load8_u (local.get $i)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x2b)) (i32.eq (local.get $c) (i32.const 0x2d)))
          (then (local.set $i (i32.add (local.get $i) (i32.const 1)))))
        (if (i32.eqz (call $isDigit (i32.load8_u (local.get $i)))) (then (return (i32.const -1))))
        (local.set $i (call $skipDigits (local.get $i)))))
    (local.get $i))

  ;; Reads `"key" :` at $at and the space after; notes the member when at depth 1. -1 when malformed.
  (func $readKey (param $at i32) (param $depth i32) (result i32)
    (local $end i32)
    (local $j i32)
    (local $len i32)
    (if (i32.ne (i32.load8_u (local.get $at)) (i32.const 0x22)) (then (return (i32.const -1))))
    (local.set $end (call $skipString (i32.add (local.get $at) (i32.const 1))))
    (if (i32.lt_s (local.get $end) (i32.const 0)) (then (return (i32.const -1))))
    (global.set $keys (i32.add (global.get $keys) (i32.const 1)))
    ;; Which of the keys $reasoningById reads this is, by its length first (little-endian words).
    (local.set $len (i32.sub (i32.sub (local.get $end) (local.get $at)) (i32.const 2)))
    (global.set $keyKind (i32.const 0))
    (if (i32.eq (local.get $len) (i32.const 4))
      (then
        (if (i32.eq (i32.load offset=1 align=1 (local.get $at)) (i32.const 0x65707974))
          (then (global.set $keyKind (i32.const 1))))))
    (if (i32.eq (local.get $len) (i32.const 2))
      (then
        (if (i32.eq (i32.load16_u offset=1 align=1 (local.get $at)) (i32.const 0x6469))
          (then (global.set $keyKind (i32.const 2))))))
    (if (i32.eq (local.get $len) (i32.const 17))
      (then
        (if (i32.and
              (i32.and
                (i64.eq (i64.load offset=1 align=1 (local.get $at)) (i64.const 0x6574707972636e65))
                (i64.eq (i64.load offset=9 align=1 (local.get $at)) (i64.const 0x6e65746e6f635f64)))
              (i32.eq (i32.load8_u offset=17 (local.get $at)) (i32.const 0x74)))
          (then
            (global.set $keyKind (i32.const 3))
            ;; the object's byte ($stack is $n + 16): the first "encrypted_content", or a second
            (local.set $j (i32.add (i32.add (global.get $n) (i32.const 15)) (local.get $depth)))
            (call $mark (local.get $j)
              (select (i32.const 32) (i32.const 16) (i32.and (i32.load8_u (local.get $j)) (i32.const 16))))))))
    (local.set $j (call $skipSpace (local.get $end)))
    (if (i32.ne (i32.load8_u (local.get $j)) (i32.const 0x3a)) (then (return (i32.const -1))))
    (local.set $j (call $skipSpace (i32.add (local.get $j) (i32.const 1))))
    (if (i32.eq (local.get $depth) (i32.const 1))
      (then
        (global.set $pending (i32.const 1))
        (global.set $keyStart (local.get $at))
        (global.set $keyEnd (local.get $end))
        (global.set $valueStart (local.get $j))
        (global.set $valueKeys (global.get $keys))))
    (local.get $j))

  ;; 1 when the n bytes at 0 are one JSON object with nothing but space around it; 0 otherwise.
  (func (export "scan") (param $n i32) (result i32)
    (local $i i32)
    (local $c i32)
    (local $depth i32)
    (local $stack i32)
    (local $inObject i32)
    (local $j i32)
    (global.set $n (local.get $n))
    (global.set $pending (i32.const 0))
    (global.set $keys (i32.const 0))
    (global.set $seen (i32.const 0))
    (global.set $escapedLetter (i32.const 0))
    (global.set $reasoningById (i32.const 0))
    (global.set $keyKind (i32.const 0))
    (v128.store align=1 (local.get $n) (v128.const i64x2 0 0))
    (local.set $stack (i32.add (local.get $n) (i32.const 16)))
    (local.set $i (call $skipSpace (i32.const 0)))
    (if (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x7b)) (then (return (i32.const 0))))
    ;; Each turn reads one value at $i, then the separators after it, up to the next value.
    (loop $value
      (local.set $c (i32.load8_u (local.get $i)))
      (block $ended ;; a value ended at $i
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x7b)) (i32.eq (local.get $c) (i32.const 0x5b)))
          (then
            (i32.store8 (i32.add (local.get $stack) (local.get $depth))
              (select (i32.const 1) (i32.const 2) (i32.eq (local.get $c) (i32.const 0x7b))))
            (local.set $depth (i32.add (local.get $depth) (i32.const 1)))
            (local.set $i (call $skipSpace (i32.add (local.get $i) (i32.const 1))))
            ;; empty: the closing byte is the opening one plus two, for both kinds
            (if (i32.eq (i32.load8_u (local.get $i)) (i32.add (local.get $c) (i32.const 2)))
              (then
                (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br $ended)))
            (if (i32.eq (local.get $c) (i32.const 0x7b))
              (then
                (local.set $i (call $readKey (local.get $i) (local.get $depth)))
                (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const 0))))))
            (br $value))) ;; the first member's value, or the array's first value
        (if (i32.eq (local.get $c) (i32.const 0x22))
          (then
            (local.set $j (call $skipString (i32.add (local.get $i) (i32.const 1))))
            (if (i32.lt_s (local.get $j) (i32.const 0)) (then (return (i32.const 0))))
            ;; a member's value: its object's byte is at $stack + $depth - 1
            (if (global.get $keyKind)
              (then
                (call $noteString (i32.sub (i32.add (local.get $stack) (local.get $depth)) (i32.const 1)) (global.get $keyKind)
                  (i32.add (local.get $i) (i32.const 1)) (i32.sub (i32.sub (local.get $j) (local.get $i)) (i32.const 2)))))
            (local.set $i (local.get $j))
            (br $ended)))
        (if (i32.or (i32.eq (local.get $c) (i32.const 0x2d)) (call $isDigit (local.get $c)))
          (then
            (local.set $i (call $skipNumber (local.get $i)))
            (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const 0))))
            (br $ended)))
        ;; literals, compared as words: "true" and "null" whole, "false" as "fals" and "e"
        (if (i32.eq (local.get $c) (i32.const 0x74))
          (then
            (if (i32.ne (i32.load align=1 (local.get $i)) (i32.const 0x65757274)) (then (return (i32.const 0))))
            (local.set $i (i32.add (local.get $i) (i32.const 4)))
            (br $ended)))
        (if (i32.eq (local.get $c) (i32.const 0x6e))
          (then
            (if (i32.ne (i32.load align=1 (local.get $i)) (i32.const 0x6c6c756e)) (then (return (i32.const 0))))
            (local.set $i (i32.add (local.get $i) (i32.const 4)))
            (br $ended)))
        (if (i32.eq (local.get $c) (i32.const 0x66))
          (then
            (if (i32.or
                  (i32.ne (i32.load align=1 (local.get $i)) (i32.const 0x736c6166))
                  (i32.ne (i32.load8_u offset=4 (local.get $i)) (i32.const 0x65)))
              (then (return (i32.const 0))))
            (local.set $i (i32.add (local.get $i) (i32.const 5)))
            (br $ended)))
        (return (i32.const 0)))

      ;; A value ended at $i: close what it ends, up to the next value.
      (loop $close
        (if (i32.and (i32.eq (local.get $depth) (i32.const 1)) (global.get $pending))
          (then
            (call $member (global.get $keyStart) (global.get $keyEnd) (global.get $valueStart) (local.get $i)
              (i32.sub (global.get $keys) (global.get $valueKeys)))
            (global.set $pending (i32.const 0))))
        (local.set $i (call $skipSpace (local.get $i)))
        (if (i32.eqz (local.get $depth)) (then (return (i32.eq (local.get $i) (local.get $n)))))
        (local.set $c (i32.load8_u (local.get $i)))
        (local.set $inObject
          (i32.eq (i32.and (i32.load8_u (i32.add (local.get $stack) (i32.sub (local.get $depth) (i32.const 1)))) (i32.const 3)) (i32.const 1)))
        (if (i32.eq (local.get $c) (i32.const 0x2c))
          (then
            (local.set $i (call $skipSpace (i32.add (local.get $i) (i32.const 1))))
            (if (local.get $inObject)
              (then
                (local.set $i (call $readKey (local.get $i) (local.get $depth)))
                (if (i32.lt_s (local.get $i) (i32.const 0)) (then (return (i32.const 0))))))
            (br $value)))
        ;; `}` closes an object, `]` an array
        (if (i32.ne (local.get $c) (select (i32.const 0x7d) (i32.const 0x5d) (local.get $inObject)))
          (then (return (i32.const 0))))
        ;; an object closes: a "type" of "reasoning" and an "id", without exactly one non-empty "encrypted_content"
        (if (local.get $inObject)
          (then
            (local.set $c (i32.load8_u (i32.add (local.get $stack) (i32.sub (local.get $depth) (i32.const 1)))))
            (if (i32.and
                  (i32.eq (i32.and (local.get $c) (i32.const 12)) (i32.const 12))
                  (i32.ne (i32.and (local.get $c) (i32.const 112)) (i32.const 80)))
              (then (global.set $reasoningById (i32.const 1))))))
        (local.set $depth (i32.sub (local.get $depth) (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $close)))
    (unreachable))
)
