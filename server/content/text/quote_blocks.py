"""Separators and Outlook-style header blocks that open quoted history, and forward markers. Pure, total.

Split out of quotes.py (which finds attributions and assembles the kept text): a dashed "Original Message"
title, a rule above a header block, or a From/Date[/To/Subject] block in ~25 languages starts history; a forward
marker means what follows is shared content, never history.
"""

from __future__ import annotations

import re

MAX_LINE = 600  # longer lines are never attributions or headers (and keep regex cost bounded)
_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SPACE = "[\\s\u00a0\u202f]"
COLON = f"{SPACE}*[:：]{SPACE}*$"
TIME = re.compile(r"(?<!\d)\d{1,2}[:.h]\d{2}(?!\d)")


def clean(line: str) -> str:
    """A line without its CR and bidi marks (Windows Mail puts LRM marks around every date field)."""
    return _BIDI.sub("", line.rstrip("\r"))


_ORIGINAL = (
    "original|reply message|origine|ursprüngliche|ursprungliche|oorspronkelijk|oprindelig|opprinnelig|ursprungligt|"
    "alkuperäinen|исходное|оригинал|oryginal|původní|pôvodn|eredeti|orijinal|αρχικό|原始|元のメッセージ|원본|izvorn"
)
_FORWARDED = (
    "forward|weitergeleitet|transféré|transfere|réexpédié|reenviado|inoltrato|doorgestuurd|videresendt|"
    "vidarebefordrat|edelleenlähetetty|välitetty|пересыла|przekazan|přeposlan|továbbított|iletilmiş|προωθ|"
    "转发|轉寄|転送|전달|encaminhad|reencaminhad"
)
_DASHED = re.compile(r"^\s*-{2,}\s*(?P<title>[^-\n]{3,60}?)\s*-{2,}\s*$")
_IS_ORIGINAL = re.compile(_ORIGINAL, re.I)
_IS_FORWARD = re.compile(_FORWARDED, re.I)
_FORWARD_INTRO = re.compile(
    r"^\s*(?:begin forwarded message|anfang der weitergeleiteten (?:e-mail|nachricht)|"
    r"d[ée]but du message (?:r[ée]exp[ée]di[ée]|transf[ée]r[ée])|inicio del mensaje reenviado|"
    r"inizio messaggio inoltrato|in[íi]cio da mensagem (?:reencaminhada|encaminhada)|begin doorgestuurd bericht|"
    r"vidarebefordrat meddelande|videresendt (?:meddelelse|melding|besked)|välitetty viesti|"
    r"начало переадресованного сообщения|pocz[aą]tek przekazywanej wiadomo[śs]ci|"
    r"začátek přeposlané zprávy|转发的邮件|転送されたメッセージ)" + COLON,
    re.I,
)
_RULE = re.compile(r"^\s*(?:_{5,}|-{5,}|={5,})\s*$")

# Outlook/Hotmail header blocks: key names by kind (lower case, "_" for a space), matched whole before the colon.
_HEADER_KEYS = {
    "from": "from von de da van fra från от от_кого od lähettäjä feladó kimden від afzender remitente mittente "
    "expéditeur absender nadawca odesílatel saatja gönderen pengirim dari frá από αποστολέας מאת من จาก 发件人 寄件者 "
    "寄件人 差出人 de_la người_gửi từ 보낸_사람",
    "date": "sent date datum dato data fecha envoyé envoyé_le enviado enviado_el enviada enviada_em enviado_em inviato "
    "verzonden verstuurd gesendet sendt skickat отправлено дата wysłano wysłane lähetetty päivämäärä odesláno "
    "elküldve dátum gönderildi tarih στάλθηκε ημερομηνία dikirim terkirim tanggal trimis poslano надіслано "
    "изпратено saadetud išsiųsta nosūtīts נשלח تاريخ ส่ง 发送时间 發送時間 寄件日期 送信日時 日付 日期 时间 "
    "đã_gửi ngày 보낸_날짜 تم_الإرسال",
    "to": "to an à a para aan til till кому do vastaanottaja címzett kime komu kepada προς destinataire empfänger "
    "destinatario adresat pentru către saaja אל إلى ถึง 收件人 收件者 宛先 đến tới 받는_사람",
    "cc": "cc kopie kopie_an копия kopio másolat bilgi dw kopi kopia copie copia cópia kópia tembusan κοιν 抄送 副本 "
    "참조",
    "subject": "subject betreff objet asunto oggetto assunto onderwerp emne ämne тема temat aihe předmět tárgy konu "
    "subiect predmet θέμα perihal subjek pealkiri tema sujet נושא الموضوع เรื่อง 主题 主旨 件名 제목 chủ_đề tiêu_đề",
}
_KEY_KIND = {key.replace("_", " "): kind for kind, keys in _HEADER_KEYS.items() for key in keys.split()}
_HEADER = re.compile(
    r"^\s*[*_]{0,2}\s*(?P<key>[^\W\d_][^:：*]{0,24}?)\s*[*_]{0,2}"
    rf"{SPACE}*[:：]{SPACE}*[*_]{{0,2}}{SPACE}*(?P<value>.*)$"
)


def forward_marker(line: str) -> bool:
    if _FORWARD_INTRO.match(line):
        return True
    dashed = _DASHED.match(line)
    return bool(dashed and _IS_FORWARD.search(dashed.group("title")))


# -- separators and header blocks -----------------------------------------------------------------------------


def history_start(lines: list[str], index: int) -> int | None:
    """Where history starts if line `index` opens a separator or a header block, else None."""
    line = clean(lines[index])
    dashed = _DASHED.match(line)
    if dashed and _IS_ORIGINAL.search(dashed.group("title")) and not _IS_FORWARD.search(dashed.group("title")):
        return index
    if _header_kind(line)[0] in ("from", "date") and _header_block(lines, index):
        before = index - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        return before if before >= 0 and _RULE.match(clean(lines[before])) else index
    return None


def _header_kind(line: str) -> tuple[str | None, str]:
    match = _HEADER.match(line) if len(line) <= MAX_LINE else None
    if not match:
        return None, ""
    key = " ".join(match.group("key").lower().split())
    return _KEY_KIND.get(key), match.group("value").strip(" *_")


def _header_block(lines: list[str], index: int) -> bool:
    """Whether a run of header lines starts at `index`: a sender, a date (with a digit) and a subject, each key
    once, in consecutive lines (up to three wrapped-value lines between keys; a blank line ends the run).
    Outlook, Hotmail and forwards always carry the three; an itinerary ("From: Berlin / To: Paris") does not."""
    kinds: dict[str, str] = {}
    at, gap = index, 0
    while at < len(lines) and at < index + 24 and gap <= 3:
        line = clean(lines[at])
        if not line.strip() and _next_key_is_new(lines, at, kinds):
            at += 1  # one header per paragraph, as HTML mail converted to text shows Outlook's block
            continue
        if not line.strip() or _RULE.match(line) or _DASHED.match(line):
            break
        kind, value = _header_kind(line)
        if kind is None:
            gap += 1
        elif kind in kinds:
            break
        else:
            kinds[kind] = value
            gap = 0
        at += 1
    if not {"from", "date"} <= kinds.keys() or not any(ch.isdigit() for ch in kinds["date"]):
        return False
    timed = TIME.search(kinds["date"]) is not None
    if "subject" in kinds:
        # Windows Mail names the sender by first name only ("От: Иван"): all four keys and a time show it is mail.
        return _mailbox(kinds["from"]) or ("to" in kinds and timed and bool(kinds["from"].strip()))
    # Windows Mail and some Outlook forms leave the subject out: then an address and a time must show it is mail.
    return "to" in kinds and "@" in kinds["from"] + kinds["to"] and timed


def _next_key_is_new(lines: list[str], at: int, kinds: dict[str, str]) -> bool:
    """Whether the blank line `at` sits inside a header block: a block has begun and the next text line holds a
    header key not seen yet."""
    if not kinds:
        return False
    nxt = at + 1
    while nxt < len(lines) and nxt <= at + 2 and not lines[nxt].strip():
        nxt += 1
    if nxt >= len(lines) or nxt > at + 2:
        return False
    kind = _header_kind(clean(lines[nxt]))[0]
    return kind is not None and kind not in kinds


def _mailbox(value: str) -> bool:
    """A sender as header blocks show it: an address, or a name of two or more words, the first and last
    capitalized ("Carol Smith", "Smith, Carol", "Jan de Vries"); not "Berlin" or "your name"."""
    if "@" in value:
        return True
    words = value.replace(",", " ").replace('"', " ").replace("'", " ").split()
    return 2 <= len(words) <= 8 and not words[0][:1].islower() and not words[-1][:1].islower()
