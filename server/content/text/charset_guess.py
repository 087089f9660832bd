"""A small byte-level charset guess for mail whose declared charset is missing, unknown or wrong.

Legacy CJK codecs accept most byte soup, so "decodes without error" proves little. Each candidate that decodes
strictly is scored by how plausible its text is: the most frequent characters of Chinese, Japanese and Korean
mail score high (a wrong CJK codec lands on rare characters at random), kana and CJK punctuation score, and the
signatures of a wrong guess (half-width katakana runs, private-use, control and rare-extension characters,
accented Latin letters glued to other non-ASCII letters) cost. No I/O, never raises.
"""

from __future__ import annotations

import re

# About 300 of the most frequent characters of simplified and traditional Chinese running text (they cover
# roughly half of it), plus frequent Japanese kanji. Kept small on purpose: a mis-decoded text hits a short list
# only by chance (~5%), a genuine one ~50% of the time.
_COMMON_HAN = (
    "的一是不了在人有我他这個个们們中来來上大为為和国國地到以说說时時要就出会會可也你对對生能而子那得于着下自之"
    "年过過发發后後作里裡用道行所然家种種事成方多经經么麼去法学學如都同现現当當没沒动動面起看定天分还還进進好小部"
    "其些主样樣理心她本前开開但因只从從想实實日者意无無力它与與长長把机機十民第公此已工使情明性知全三又关關点點正"
    "业業外将將两兩高间間由问問很最重并物手应應向头頭文体體相见見被利什二等产產或新己制身果加西月话話合回特代内信"
    "表化老给給世位次度门門任常先海通教原东東声聲提立及比员員解水名真论論处處走义義各入口认認条條平系气氣题題活更"
    "别打女变變四神总總何电電数數安少报報才结結反受目量再感建务務做接必场場件计計管期市直资資命金指许許统統区區保"
    "至形社便空决決治展科司五基书書非则則听聽白界达達光放强強即像难難且权權思完设設式色路记記品住告类類求据據程"
    "您请請谢謝邮郵附件议議确確认訂订单單客户戶送知通购購买買费費价價格网網站址联聯系係址号號码碼"
    "円私今思場合東京社員様様申込下記以上連絡確認願致本日明日予定"
)
# Frequent Hangul syllables of Korean running text (particles, verb endings, common nouns).
_COMMON_HANGUL = (
    "이다는의에가을를하고서지기한로사도수으나니리자대어아인정시일그있보것들게전해내장적제부주우요면성진구년만등와과"
    "소상국계동던러습했할되며라여신비거식문원안경마화재위공없중세않입말오생분관회연조실저더학무같까물방현선발치후때"
    "개용두모알결당반법님께드립감사합십오청확메첨파"
)
_COMMON = frozenset(_COMMON_HAN + _COMMON_HANGUL)

# Candidate codecs in tie-break order. cp1251 lets Cyrillic mail without a declaration come out right.
_CJK_CANDIDATES = ("gb18030", "cp932", "cp949", "big5hkscs", "euc_jp")
_WESTERN_CANDIDATES = ("cp1252", "cp1251", "koi8_r")
_SAMPLE_CHARS = 8_000  # enough to tell codecs apart; bounds the cost of each guess


def _char_score(ch: str, prev: str, nxt: str) -> float:
    code = ord(ch)
    if code < 0x80:
        return -2.0 if code < 0x20 and ch not in "\t\n\r\x0c" else 0.0
    if ch in _COMMON:
        return 2.0
    if 0x3041 <= code <= 0x309F:  # hiragana: the backbone of Japanese text
        return 2.0
    if 0x30A0 <= code <= 0x30FF or 0x3000 <= code <= 0x303F:  # katakana, CJK punctuation
        return 1.0
    if 0xFF01 <= code <= 0xFF5E:  # full-width ASCII forms: common punctuation in CJK text
        return 0.5
    if 0xFF61 <= code <= 0xFF9F:  # half-width katakana: what Shift_JIS makes of other CJK bytes
        return -1.0
    if 0x4E00 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7A3:
        return 0.0
    if (
        0x80 <= code < 0xA0
        or 0x3400 <= code <= 0x4DBF
        or 0xE000 <= code <= 0xF8FF
        or 0xF900 <= code <= 0xFAFF
        or code >= 0x10000
        or ch == "\ufffd"
    ):
        return -2.0
    if 0x410 <= code <= 0x44F or code in (0x401, 0x451):
        return _cyrillic_score(ch, prev)
    if 0xC0 <= code <= 0x24F:
        # Accented Latin letters sit inside words, next to ASCII letters; mojibake of CJK bytes strings them
        # together with other non-ASCII characters instead.
        return 1.0 if any(c.isascii() and c.isalpha() for c in (prev, nxt) if c) else -1.0
    if 0x400 <= code <= 0x4FF:  # non-Russian Cyrillic letters: rare, and typical of cp1251 mojibake
        return -1.0
    return 0.0


def _cyrillic_score(ch: str, prev: str) -> float:
    # Russian text is mostly lower case with capitals only at word starts; reading CJK bytes (or KOI8-R) as
    # cp1251 gives case that flips at random inside words.
    prev_cyrillic = bool(prev) and ("\u0410" <= prev <= "\u044f" or prev in "\u0401\u0451")
    if ch.islower():
        return 1.0 if prev_cyrillic and prev.islower() else 0.0
    if not prev_cyrillic:
        return 0.5
    return 0.0 if prev.isupper() else -1.5


def plausibility(text: str) -> float:
    """Score how much `text` looks like real human text (higher is more plausible).

    Args:
        text: Decoded text; only its first 8,000 characters are scored.

    Returns:
        The summed per-character score (ASCII characters count zero).
    """
    sample = text[:_SAMPLE_CHARS]
    score = 0.0
    last = len(sample) - 1
    for index, ch in enumerate(sample):
        if ch < "\x80" and ch >= " ":
            continue
        prev = sample[index - 1] if index else ""
        nxt = sample[index + 1] if index < last else ""
        score += _char_score(ch, prev, nxt)
    return score


_EUC_KANA = re.compile(rb"[\xa4\xa5][\xa1-\xf6]")
_HIGH = re.compile(rb"[\x80-\xff]")


def _looks_euc_kana(data: bytes) -> bool:
    # EUC-JP and GB2312 share the kana rows, so both read Japanese kana right and differ on the rest; frequent
    # kana mean Japanese, which puts EUC-JP first on a tie.
    sample = data[:65536]
    return len(_EUC_KANA.findall(sample)) * 6 > len(_HIGH.findall(sample))


def guess_decode(data: bytes, *, exclude: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """Decode `data` with the most plausible of a few common mail codecs.

    Args:
        data: Bytes that are not valid UTF-8 (or whose declared charset was unusable).
        exclude: Codecs not to consider (the declared one that already failed the plausibility test).

    Returns:
        (text, codec) for the best strictly-decoding candidate, or None when none decodes.
    """
    candidates: list[str] = []
    if b"\x1b$" in data or b"\x1b(" in data:
        candidates += ["iso2022_jp_ext", "iso2022_jp_2"]
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        candidates.append("utf-16")
    cjk = list(_CJK_CANDIDATES)
    if _looks_euc_kana(data):
        cjk.remove("euc_jp")
        cjk.insert(0, "euc_jp")
    candidates += cjk + list(_WESTERN_CANDIDATES)
    best: tuple[float, str, str] | None = None
    for codec in candidates:
        if codec in exclude:
            continue
        try:
            text = data.decode(codec)
        except (UnicodeDecodeError, LookupError):
            continue
        score = plausibility(text)
        if best is None or score > best[0]:
            best = (score, text, codec)
    return None if best is None else (best[1], best[2])
