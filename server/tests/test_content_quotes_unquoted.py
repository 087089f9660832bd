"""strip_quoted_reply on history mailers leave without ">" and on attributions without an address.

Real-world forms (checked against a corpus the project does not ship; written here by hand): Apple Mail's
"On Apr 3, 2012, at 4:19 PM, bob wrote:" (a bare name), Sparrow's "On Tuesday, April 3, 2012 at 4:55 PM, xxx
wrote:", Gmail's verbless attributions in other languages followed by unquoted history, Outlook / Windows Mail
header blocks in several languages (with and without a subject line, one header per paragraph).
"""

from __future__ import annotations

import pytest

from server.content.text.quotes import strip_quoted_reply

HISTORY = "Could you send the signed copy by Friday?\nBest regards"

ATTRIBUTIONS = [
    "On Apr 3, 2012, at 4:19 PM, bob wrote:",
    "On Tuesday, April 3, 2012 at 4:55 PM, xxx wrote:",
    "On 3 Apr 2012, at 16:19, bob smith wrote:",
    "ср, 30 апр. 2025 г. в 15:19, Иван Петров <ivan@example.ru>:",
    "tir. 18. apr. 2017 kl. 13:09 skrev Ola Nordmann <ola@example.no>:",
    "2017-11-24 16:32 GMT+01:00 John Doe <john@example.com>:",
    '11:00 AM, November 17, 2021, "John Doe" <john@example.com>:',
    "Am Mi., 30. Apr. 2025 um 15:19 Uhr schrieb Hans Muster <h@example.de>:",
    "Le mer. 30 avr. 2025 à 15:19, Jean Dupont <j@example.fr> a écrit :",
    "El mié, 30 abr 2025 a las 15:19, Juan Pérez (<j@example.es>) escribió:",
    "Op wo 30 apr 2025 om 15:19 schreef Jan de Vries <j@example.nl>:",
    "śr., 30 kwi 2025 o 15:19 Jan Kowalski <j@example.pl> napisał(a):",
    "2025年4月30日(水) 15:19 山田太郎 <t@example.jp>:",
    "张三 <z@example.cn> 于2025年4月30日周三 15:19写道：",
    "2025년 4월 30일 (수) 오후 3:19, 홍길동 <h@example.kr>님이 작성:",
    # Apple Mail in other languages, a bare name before or after the verb
    "Am 03.04.2012 um 16:19 schrieb bob:",
    "Le 3 avr. 2012 à 16:19, bob a écrit :",
    "El 3 abr 2012, a las 16:19, bob escribió:",
    "Op 3 apr. 2012 om 16:19 heeft bob het volgende geschreven:",
    "Il giorno 3 apr 2012, alle ore 16:19, bob ha scritto:",
    "3 apr. 2012 kl. 16:19 skrev bob:",
    "W dniu 3.04.2012 o 16:19, bob pisze:",
]


@pytest.mark.parametrize("attribution", ATTRIBUTIONS)
@pytest.mark.parametrize("quoted", [False, True], ids=["unquoted", "quoted"])
def test_history_after_an_attribution_goes_quoted_or_not(attribution: str, quoted: bool) -> None:
    history = "\n".join(f"> {line}" for line in HISTORY.split("\n")) if quoted else HISTORY
    body = f"Thanks, that works.\n\n{attribution}\n\n{history}\n"
    assert strip_quoted_reply(body) == "Thanks, that works."


BLOCKS = [
    "От: Иван Петров <ivan@example.ru>\nОтправлено: 30 апреля 2025 г. 15:19\nКому: Петр <p@example.ru>\nТема: Привет",
    "От: Иван Петров\nОтправлено: \u200eсреда\u200e, \u200e30\u200e апреля 2025 г. 15:19\nКому: Петр\nТема: Привет",
    "От: ivan@example.ru\nОтправлено: 30 апреля 2025 г. 15:19\nКому: p@example.ru",
    "От: Иван\nОтправлено: 30 апреля 2025 г. 15:19\nКому: Петр\nТема: Счёт",  # Windows Mail: first names only
    "От кого: Иван <ivan@example.ru>\nДата: 30 апреля 2025 г. 15:19\nКому: p@example.ru\nТема: Привет",
    "Von: Hans Muster <h@example.de>\nGesendet: Mittwoch, 30. April 2025 15:19\nAn: Petra <p@example.de>",
    "Von: Hans Muster <h@example.de>\n\nGesendet: Mittwoch, 30. April 2025 15:19\n\nAn: Petra\n\nBetreff: Hallo",
    "De : Jean Dupont <j@example.fr>\nEnvoyé : mercredi 30 avril 2025 15:19\nÀ : Marie <m@example.fr>\nObjet : Salut",
    "From: John Doe <j@example.com>\nSent: Wednesday, April 30, 2025 3:19 PM\nTo: Bob <b@example.com>",
]


@pytest.mark.parametrize("block", BLOCKS)
def test_an_outlook_header_block_in_any_language_starts_history(block: str) -> None:
    body = f"Thanks, that works.\n\n{block}\n\n{HISTORY}\n"
    assert strip_quoted_reply(body) == "Thanks, that works."


AUTHOR_ONLY = [
    "Look at this log.\n\nOn Apr 3, 2012 at 4:19 PM, the server wrote:\n\nERROR disk full\nretrying",
    "On Monday at 4:19 PM, we wrote:\nthe numbers are final.",
    "Protokoll:\n\nAm 03.04.2012 um 16:19 schrieb der Server:\n\nFestplatte voll\nNeustart",
    "Itinerary\nFrom: New York City\nDate: May 3, 10:30\nTo: Boston\n\nBring the tickets.",
    "Notes from 2025-04-30 15:19 meeting with John <john@example.com>:\nbudget approved\nhiring paused",
]


@pytest.mark.parametrize("text", AUTHOR_ONLY)
def test_the_authors_own_lines_that_look_similar_stay(text: str) -> None:
    assert strip_quoted_reply(text) == text
