"""Reply bodies as mailers write them, for strip_quoted_reply (server/content/text/quotes.py).

Each case is the author's new text, then the quoted history the way one mailer in one language lays it out
(attribution lines, ">" blocks, Outlook header blocks, separators), written by hand for these tests. A stripped
body must equal the author's text exactly and keep none of the `quoted` sentences.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class QuoteCase:
    name: str
    author: str  # what must remain, exactly
    history: str  # appended after a blank line (or the whole body when `body` is given)
    quoted: tuple[str, ...]  # sentences of the history: none may remain
    body: str | None = None  # a full body when the history is interleaved with the author's text

    @property
    def text(self) -> str:
        return self.body if self.body is not None else f"{self.author}\n\n{self.history}\n"


def _q(*lines: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in lines)


AUTHOR_IT = "Ciao Marco,\n\nva benissimo, ci vediamo domani alle 10 in ufficio.\n\nA presto,\nAnna"
AUTHOR_NL = "Hoi Jan,\n\nDank je, de offerte ziet er goed uit. Ik stuur hem door naar Pieter.\n\nGroet,\nAnna"
AUTHOR_PL = "Cześć Piotrze,\n\ndziękuję za informację, termin mi pasuje.\n\nPozdrawiam,\nAnna"
AUTHOR_FI = "Hei Matti,\n\nkiitos viestistä, torstai sopii minulle hyvin.\n\nTerveisin,\nAnna"
AUTHOR_RU = "Иван, добрый день!\n\nДоговор подписан, скан пришлю вечером.\n\nС уважением,\nАнна"
AUTHOR_FR = "Bonjour Sophie,\n\nMerci pour votre retour, je valide la proposition.\n\nCordialement,\nAnna"
AUTHOR_DE = "Hallo Hans,\n\ndanke für das Angebot, wir nehmen Variante B.\n\nViele Grüße\nAnna"
AUTHOR_ES = "Hola Carlos,\n\nperfecto, te confirmo la reserva para el jueves.\n\nUn saludo,\nAnna"
AUTHOR_PT = "Olá João,\n\nobrigada, o orçamento está aprovado.\n\nAbraço,\nAnna"
AUTHOR_DA = "Hej Lars,\n\ntak for tilbuddet, vi går videre med det.\n\nVenlig hilsen\nAnna"
AUTHOR_EN = "Hi Carol,\n\nThursday works for me, I booked the small room.\n\nThanks,\nAnna"

QUOTED_IT = ("ci vediamo domani alle 10?", "Marco Rossi")
QUOTED_NL = ("Hierbij de offerte voor het nieuwe dak.", "Met vriendelijke groet, Jan")
QUOTED_PL = ("Czy termin w czwartek Ci pasuje?", "Piotr Nowak")
QUOTED_FI = ("Sopiiko torstai palaverille?", "Matti Virtanen")
QUOTED_RU = ("Пришлите, пожалуйста, подписанный договор.", "Иван Петров")
QUOTED_FR = ("Vous trouverez ci-joint notre proposition.", "Sophie Martin")
QUOTED_DE = ("anbei unser Angebot mit zwei Varianten.", "Hans Müller")
QUOTED_ES = ("¿Te confirmo la reserva para el jueves?", "Carlos García")
QUOTED_PT = ("Segue o orçamento atualizado.", "João Silva")
QUOTED_DA = ("Hermed vores tilbud på opgaven.", "Lars Jensen")
QUOTED_EN = ("Does Thursday at 10 work for everyone?", "Carol Smith")


ATTRIBUTION_CASES: list[QuoteCase] = [
    # -- attributions followed by ">" blocks ------------------------------------------------------------------
    QuoteCase(
        "it-gmail",
        AUTHOR_IT,
        "Il giorno lun 4 mar 2024 alle ore 09:12 Marco Rossi <marco.rossi@example.it> ha scritto:\n\n"
        + _q("Ciao Anna,", "ci vediamo domani alle 10?", "", "Marco Rossi"),
        QUOTED_IT,
    ),
    QuoteCase(
        "it-gmail-wrapped",
        AUTHOR_IT,
        "Il giorno mer 13 nov 2024 alle ore 17:45 Giovanni Battista Bianchi Ferretti <\n"
        "giovanni.bianchi@studiolegale.example.it> ha scritto:\n\n" + _q("ci vediamo domani alle 10?", "Marco Rossi"),
        (*QUOTED_IT, "Giovanni Battista"),
    ),
    QuoteCase(
        "it-thunderbird",
        AUTHOR_IT,
        "Il 04/03/2024 09:12, Marco Rossi ha scritto:\n"
        + _q("Ciao Anna,", "ci vediamo domani alle 10?", "Marco Rossi"),
        QUOTED_IT,
    ),
    QuoteCase(
        "nl-gmail",
        AUTHOR_NL,
        "Op ma 4 mrt 2024 om 09:12 schreef Jan de Vries <jan.devries@example.nl>:\n\n"
        + _q("Hoi Anna,", "", "Hierbij de offerte voor het nieuwe dak.", "", "Met vriendelijke groet, Jan"),
        QUOTED_NL,
    ),
    QuoteCase(
        "nl-apple",
        AUTHOR_NL,
        "Op 4 mrt. 2024, om 09:12 heeft Jan de Vries <jan.devries@example.nl> het volgende geschreven:\n\n"
        + _q("Hierbij de offerte voor het nieuwe dak.", "Met vriendelijke groet, Jan"),
        QUOTED_NL,
    ),
    QuoteCase(
        "pl-gmail",
        AUTHOR_PL,
        "pon., 4 mar 2024 o 09:12 Piotr Nowak <piotr.nowak@example.pl> napisał(a):\n\n"
        + _q("Cześć Anno,", "Czy termin w czwartek Ci pasuje?", "Piotr Nowak"),
        QUOTED_PL,
    ),
    QuoteCase(
        "pl-gmail-wrapped",
        AUTHOR_PL,
        "czw., 21 lis 2024 o 16:03 Katarzyna Wiśniewska-Zielińska <katarzyna.wisniewska@example.pl>\n"
        "napisał(a):\n\n" + _q("Czy termin w czwartek Ci pasuje?", "Piotr Nowak"),
        (*QUOTED_PL, "Katarzyna"),
    ),
    QuoteCase(
        "pl-thunderbird",
        AUTHOR_PL,
        "W dniu 4.03.2024 o 09:12, Piotr Nowak pisze:\n" + _q("Czy termin w czwartek Ci pasuje?", "Piotr Nowak"),
        QUOTED_PL,
    ),
    QuoteCase(
        "fi-gmail",
        AUTHOR_FI,
        "ma 4. maalisk. 2024 klo 9.12 Matti Virtanen <matti.virtanen@example.fi> kirjoitti:\n\n"
        + _q("Hei Anna,", "Sopiiko torstai palaverille?", "Matti Virtanen"),
        QUOTED_FI,
    ),
    QuoteCase(
        "ru-gmail",
        AUTHOR_RU,
        "ср, 30 апр. 2025 г. в 15:19, Иван Петров <ivan.petrov@example.ru>:\n\n"
        + _q("Анна, здравствуйте!", "Пришлите, пожалуйста, подписанный договор.", "Иван Петров"),
        QUOTED_RU,
    ),
    QuoteCase(
        "ru-gmail-wrapped",
        AUTHOR_RU,
        "ср, 30 апр. 2025 г. в 15:19, Константин Константинопольский-Петров <\n"
        "konstantin.konstantinopolsky@example.ru>:\n\n"
        + _q("Пришлите, пожалуйста, подписанный договор.", "Иван Петров"),
        (*QUOTED_RU, "Константин"),
    ),
    QuoteCase(
        "ru-thunderbird",
        AUTHOR_RU,
        "30.04.2025 15:19, Иван Петров пишет:\n" + _q("Пришлите, пожалуйста, подписанный договор.", "Иван Петров"),
        QUOTED_RU,
    ),
    QuoteCase(
        "gmail-2017-date",
        AUTHOR_DE,
        "2017-11-24 16:32 GMT+01:00 Hans Müller <hans.mueller@example.de>:\n\n"
        + _q("Hallo Anna,", "anbei unser Angebot mit zwei Varianten.", "Hans Müller"),
        QUOTED_DE,
    ),
    QuoteCase(
        "fr-gmail-nbsp",
        AUTHOR_FR,
        "Le lun. 4 mars 2024 à 09:12, Sophie Martin <sophie.martin@example.fr> a écrit\u00a0:\n\n"
        + _q("Bonjour Anna,", "Vous trouverez ci-joint notre proposition.", "Sophie Martin"),
        QUOTED_FR,
    ),
    QuoteCase(
        "es-gmail",
        AUTHOR_ES,
        "El lun, 4 mar 2024 a las 9:12, Carlos García (<carlos.garcia@example.es>) escribió:\n\n"
        + _q("¿Te confirmo la reserva para el jueves?", "Carlos García"),
        QUOTED_ES,
    ),
    QuoteCase(
        "pt-br-gmail",
        AUTHOR_PT,
        "Em seg., 4 de mar. de 2024 às 09:12, João Silva <joao.silva@example.com.br> escreveu:\n\n"
        + _q("Segue o orçamento atualizado.", "João Silva"),
        QUOTED_PT,
    ),
    QuoteCase(
        "pt-pt-gmail",
        AUTHOR_PT,
        "João Silva <joao.silva@example.pt> escreveu no dia segunda, 4/03/2024 à(s) 09:12:\n\n"
        + _q("Segue o orçamento atualizado.", "João Silva"),
        QUOTED_PT,
    ),
    QuoteCase(
        "de-gmx",
        AUTHOR_DE,
        "Hans Müller <hans.mueller@example.de> hat am 04.03.2024 09:12 geschrieben:\n\n"
        + _q("anbei unser Angebot mit zwei Varianten.", "Hans Müller"),
        QUOTED_DE,
    ),
    QuoteCase(
        "de-gmail",
        AUTHOR_DE,
        "Am Mo., 4. März 2024 um 09:12 Uhr schrieb Hans Müller <hans.mueller@example.de>:\n\n"
        + _q("anbei unser Angebot mit zwei Varianten.", "Hans Müller"),
        QUOTED_DE,
    ),
    QuoteCase(
        "en-gmail-wrapped",
        AUTHOR_EN,
        "On Tue, Nov 24, 2026 at 9:00 AM Some Considerably Long Display Name <\nlong.address@example.com> wrote:\n\n"
        + _q("Does Thursday at 10 work for everyone?", "Carol Smith"),
        (*QUOTED_EN, "Considerably"),
    ),
    QuoteCase(
        "en-apple-wrapped",
        AUTHOR_EN,
        "On Nov 24, 2026, at 09:00, Some Considerably Long Display Name <long.address@example.com>\nwrote:\n\n"
        + _q("Does Thursday at 10 work for everyone?", "Carol Smith"),
        (*QUOTED_EN, "Considerably", "wrote"),
    ),
    QuoteCase(
        "en-nested",
        AUTHOR_EN,
        "On Mon, Mar 4, 2024 at 9:12 AM Carol <carol@example.com> wrote:\n\n"
        + _q(
            "Does Thursday at 10 work for everyone?",
            "Carol Smith",
            "",
            "On Sun, Mar 3, 2024 Dave <d@example.com> wrote:",
        )
        + "\n>> Let us meet next week.\n>> Dave",
        (*QUOTED_EN, "Let us meet next week."),
    ),
    QuoteCase(
        "sv-gmail",
        "Hej Erik,\n\ntack, vi ses på torsdag.\n\nHälsningar,\nAnna",
        "Den mån 4 mars 2024 kl 09:12 skrev Erik Svensson <erik.svensson@example.se>:\n\n"
        + _q("Passar torsdag för dig?", "Erik"),
        ("Passar torsdag för dig?",),
    ),
    QuoteCase(
        "cs-gmail",
        "Dobrý den,\n\nděkuji, termín potvrzuji.\n\nS pozdravem\nAnna",
        "po 4. 3. 2024 v 9:12 odesílatel Jan Novák <jan.novak@example.cz> napsal:\n\n"
        + _q("Vyhovuje vám čtvrtek?", "Jan Novák"),
        ("Vyhovuje vám čtvrtek?",),
    ),
    QuoteCase(
        "tr-gmail",
        "Merhaba Mehmet,\n\nteşekkürler, perşembe uygun.\n\nSaygılarımla,\nAnna",
        "Mehmet Yılmaz <mehmet.yilmaz@example.com.tr>, 4 Mar 2024 Pzt, 09:12 tarihinde şunu yazdı:\n\n"
        + _q("Perşembe size uygun mu?", "Mehmet"),
        ("Perşembe size uygun mu?",),
    ),
    QuoteCase(
        "hu-gmail",
        "Szia Péter,\n\nköszönöm, a csütörtök jó.\n\nÜdv,\nAnna",
        "Nagy Péter <peter.nagy@example.hu> ezt írta (időpont: 2024. márc. 4., H, 9:12):\n\n"
        + _q("Jó neked a csütörtök?", "Péter"),
        ("Jó neked a csütörtök?",),
    ),
    QuoteCase(
        "ja-gmail",
        "山田様\n\nご連絡ありがとうございます。木曜日で問題ありません。\n\nアンナ",
        "2024年3月4日(月) 9:12 山田太郎 <taro.yamada@example.jp>:\n\n"
        + _q("木曜日のご都合はいかがでしょうか。", "山田"),
        ("木曜日のご都合はいかがでしょうか。",),
    ),
    QuoteCase(
        "zh-gmail",
        "李雷你好，\n\n周四可以，我已经订好会议室。\n\n安娜",
        "李雷 <li.lei@example.cn> 于2024年3月4日周一 09:12写道：\n\n" + _q("周四上午十点开会可以吗？", "李雷"),
        ("周四上午十点开会可以吗？",),
    ),
    QuoteCase(
        "he-gmail",
        "שלום דנה,\n\nיום חמישי מתאים לי.\n\nאנה",
        "\u202bבתאריך יום ב׳, 4 במרץ 2024 ב-9:12 מאת דנה כהן <\u202adana.cohen@example.co.il\u202c>:\u202c\n\n"
        + _q("האם יום חמישי מתאים?", "דנה"),
        ("האם יום חמישי מתאים?",),
    ),
    QuoteCase(
        "ko-gmail",
        "민수님 안녕하세요,\n\n목요일 괜찮습니다.\n\n안나 드림",
        "2024년 3월 4일 (월) 오전 9:12, 김민수 <minsu.kim@example.kr>님이 작성:\n\n"
        + _q("목요일 회의 가능하세요?", "김민수"),
        ("목요일 회의 가능하세요?",),
    ),
    QuoteCase(
        "el-gmail",
        "Γεια σου Νίκο,\n\nη Πέμπτη μου ταιριάζει.\n\nΆννα",
        "Στις Δευ 4 Μαρ 2024 στις 9:12 π.μ., ο/η Νίκος Παπαδόπουλος <nikos@example.gr> έγραψε:\n\n"
        + _q("Σου ταιριάζει η Πέμπτη;", "Νίκος"),
        ("Σου ταιριάζει η Πέμπτη;",),
    ),
    QuoteCase(
        "uk-gmail",
        "Олено, добрий день!\n\nЧетвер мені підходить.\n\nАнна",
        "пн, 4 бер. 2024 р. о 09:12 Олена Коваленко <olena.kovalenko@example.ua> пише:\n\n"
        + _q("Чи підходить вам четвер?", "Олена"),
        ("Чи підходить вам четвер?",),
    ),
    QuoteCase(
        "id-gmail",
        "Halo Budi,\n\nKamis bisa, terima kasih.\n\nSalam,\nAnna",
        "Pada tanggal Sen, 4 Mar 2024 pukul 09.12 Budi Santoso <budi.santoso@example.co.id> menulis:\n\n"
        + _q("Apakah hari Kamis bisa?", "Budi"),
        ("Apakah hari Kamis bisa?",),
    ),
    QuoteCase(
        "vi-gmail",
        "Chào anh An,\n\nThứ năm được ạ.\n\nAnna",
        "Vào Th 2, 4 thg 3, 2024 vào lúc 09:12 Nguyễn Văn An <an.nguyen@example.vn> đã viết:\n\n"
        + _q("Thứ năm có được không?", "An"),
        ("Thứ năm có được không?",),
    ),
    QuoteCase(
        "en-lotus",
        AUTHOR_EN,
        "Carol Smith <carol@example.com> wrote on 03/04/2024 09:12:33 AM:\n\n"
        + _q("Does Thursday at 10 work for everyone?", "Carol Smith"),
        QUOTED_EN,
    ),
    # -- interleaved answers: the author's text between quotes stays ------------------------------------------
    QuoteCase(
        "en-interleaved",
        "Yes, Thursday works.\n\nThe small room, I booked it.\n\nAnna",
        "",
        ("Does Thursday at 10 work for everyone?", "Which room?"),
        body="On Mon, Mar 4, 2024 at 9:12 AM Carol <carol@example.com> wrote:\n\n"
        "> Does Thursday at 10 work for everyone?\n\nYes, Thursday works.\n\n> Which room?\n\n"
        "The small room, I booked it.\n\nAnna\n",
    ),
    QuoteCase(
        "de-interleaved-with-signature",
        "Hallo Hans,\n\nVariante B, bitte.\n\nBis Freitag passt.\n\n-- \nAnna Beispiel\nEinkauf",
        "",
        ("Welche Variante nehmt ihr?", "Reicht Lieferung bis Freitag?"),
        body="Hallo Hans,\n\nAm Mo., 4. März 2024 um 09:12 Uhr schrieb Hans Müller <hans.mueller@example.de>:\n"
        "> Welche Variante nehmt ihr?\n\nVariante B, bitte.\n\n> Reicht Lieferung bis Freitag?\n\n"
        "Bis Freitag passt.\n\n-- \nAnna Beispiel\nEinkauf\n",
    ),
]
