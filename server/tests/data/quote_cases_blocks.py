"""More reply bodies for strip_quoted_reply: Outlook/Hotmail header blocks, separators and other mailers
(see quote_cases.py for the format). Header-block and separator history is not quoted with ">": all of it goes."""

from __future__ import annotations

from server.tests.data.quote_cases import (
    ATTRIBUTION_CASES,
    AUTHOR_DA,
    AUTHOR_DE,
    AUTHOR_EN,
    AUTHOR_ES,
    AUTHOR_FR,
    AUTHOR_IT,
    AUTHOR_NL,
    AUTHOR_PT,
    AUTHOR_RU,
    QUOTED_DA,
    QUOTED_DE,
    QUOTED_EN,
    QUOTED_ES,
    QUOTED_FR,
    QUOTED_IT,
    QUOTED_NL,
    QUOTED_PT,
    QUOTED_RU,
    QuoteCase,
)


def _outlook(keys: tuple[str, str, str, str], values: tuple[str, str, str, str], body: tuple[str, ...]) -> str:
    header = "\n".join(f"{key} {value}" for key, value in zip(keys, values, strict=True))
    return header + "\n\n" + "\n".join(body)


BLOCK_CASES: list[QuoteCase] = [
    # -- Outlook / Hotmail header blocks and separators (history not quoted with ">") ---------------------------
    QuoteCase(
        "fr-outlook",
        AUTHOR_FR,
        _outlook(
            ("De :", "Envoyé :", "À :", "Objet :"),
            ("Sophie Martin <sophie.martin@example.fr>", "lundi 4 mars 2024 09:12", "Anna <anna@example.com>", "Devis"),
            ("Bonjour Anna,", "", "Vous trouverez ci-joint notre proposition.", "", "Sophie Martin"),
        ),
        QUOTED_FR,
    ),
    QuoteCase(
        "fr-new-outlook",
        AUTHOR_FR,
        "De\u00a0: Sophie Martin <sophie.martin@example.fr>\nEnvoyé le\u00a0: lundi 4 mars 2024 09:12\n"
        "À\u00a0: Anna <anna@example.com>\nCc\u00a0: Paul <paul@example.fr>\nObjet\u00a0: RE: Devis\n\n"
        "Vous trouverez ci-joint notre proposition.\nSophie Martin",
        QUOTED_FR,
    ),
    QuoteCase(
        "fr-samsung-separator",
        AUTHOR_FR,
        "-------- Message d'origine --------\nDe : Sophie Martin <sophie.martin@example.fr>\n"
        "Date : 04/03/2024 09:12 (GMT+01:00)\nÀ : anna@example.com\nObjet : Devis\n\n"
        "Vous trouverez ci-joint notre proposition.\nSophie Martin",
        QUOTED_FR,
    ),
    QuoteCase(
        "nl-outlook-bold",
        AUTHOR_NL,
        "*Van:* Jan de Vries <jan.devries@example.nl>\n*Verzonden:* maandag 4 maart 2024 09:12\n"
        "*Aan:* Anna <anna@example.com>\n*Onderwerp:* Offerte dak\n\nHoi Anna,\n\n"
        "Hierbij de offerte voor het nieuwe dak.\n\nMet vriendelijke groet, Jan",
        QUOTED_NL,
    ),
    QuoteCase(
        "nl-outlook",
        AUTHOR_NL,
        _outlook(
            ("Van:", "Verzonden:", "Aan:", "Onderwerp:"),
            ("Jan de Vries", "maandag 4 maart 2024 09:12", "Anna", "RE: Offerte dak"),
            ("Hierbij de offerte voor het nieuwe dak.", "Met vriendelijke groet, Jan"),
        ),
        QUOTED_NL,
    ),
    QuoteCase(
        "it-outlook",
        AUTHOR_IT,
        "Da: Marco Rossi <marco.rossi@example.it>\nInviato: lunedì 4 marzo 2024 09:12\n"
        "A: Anna <anna@example.com>\nCc: Luca <luca@example.it>; Giulia <giulia@example.it>\n"
        "Oggetto: R: Riunione\n\nCiao Anna,\nci vediamo domani alle 10?\n\nMarco Rossi",
        QUOTED_IT,
    ),
    QuoteCase(
        "it-separator",
        AUTHOR_IT,
        "-------- Messaggio originale --------\nDa: Marco Rossi <marco.rossi@example.it>\n"
        "Data: 04/03/24 09:12 (GMT+01:00)\nA: anna@example.com\nOggetto: Riunione\n\n"
        "ci vediamo domani alle 10?\nMarco Rossi",
        QUOTED_IT,
    ),
    QuoteCase(
        "da-outlook",
        AUTHOR_DA,
        _outlook(
            ("Fra:", "Sendt:", "Til:", "Emne:"),
            ("Lars Jensen <lars.jensen@example.dk>", "4. marts 2024 09:12", "Anna <anna@example.com>", "Tilbud"),
            ("Hej Anna,", "Hermed vores tilbud på opgaven.", "Lars Jensen"),
        ),
        QUOTED_DA,
    ),
    QuoteCase(
        "da-separator",
        AUTHOR_DA,
        "-------- Oprindelig besked --------\nFra: Lars Jensen <lars.jensen@example.dk>\n"
        "Dato: 04-03-2024 09:12 (GMT+01:00)\nTil: anna@example.com\nEmne: Tilbud\n\n"
        "Hermed vores tilbud på opgaven.\nLars Jensen",
        QUOTED_DA,
    ),
    QuoteCase(
        "ru-outlook",
        AUTHOR_RU,
        _outlook(
            ("От:", "Отправлено:", "Кому:", "Тема:"),
            ("Иван Петров <ivan.petrov@example.ru>", "30 апреля 2025 г. 15:19", "Анна", "Договор"),
            ("Анна, здравствуйте!", "Пришлите, пожалуйста, подписанный договор.", "Иван Петров"),
        ),
        QUOTED_RU,
    ),
    QuoteCase(
        "de-outlook",
        AUTHOR_DE,
        "________________________________\n"
        + _outlook(
            ("Von:", "Gesendet:", "An:", "Betreff:"),
            ("Hans Müller <hans.mueller@example.de>", "Montag, 4. März 2024 09:12", "Anna", "AW: Angebot"),
            ("Hallo Anna,", "anbei unser Angebot mit zwei Varianten.", "Hans Müller"),
        ),
        QUOTED_DE,
    ),
    QuoteCase(
        "de-separator",
        AUTHOR_DE,
        "--- Ursprüngliche Nachricht ---\nVon: Hans Müller <hans.mueller@example.de>\nAn: anna@example.com\n"
        "Datum: 04.03.2024 09:12\nBetreff: Angebot\n\nanbei unser Angebot mit zwei Varianten.\nHans Müller",
        QUOTED_DE,
    ),
    QuoteCase(
        "es-outlook",
        AUTHOR_ES,
        _outlook(
            ("De:", "Enviado el:", "Para:", "Asunto:"),
            ("Carlos García <carlos.garcia@example.es>", "lunes, 4 de marzo de 2024 9:12", "Anna", "RE: Reserva"),
            ("¿Te confirmo la reserva para el jueves?", "Carlos García"),
        ),
        QUOTED_ES,
    ),
    QuoteCase(
        "pt-outlook",
        AUTHOR_PT,
        _outlook(
            ("De:", "Enviado:", "Para:", "Assunto:"),
            ("João Silva <joao.silva@example.pt>", "segunda-feira, 4 de março de 2024 09:12", "Anna", "Orçamento"),
            ("Segue o orçamento atualizado.", "João Silva"),
        ),
        QUOTED_PT,
    ),
    QuoteCase(
        "ja-outlook",
        "山田様\n\n見積書を確認しました。\n\nアンナ",
        _outlook(
            ("差出人:", "送信日時:", "宛先:", "件名:"),
            ("山田太郎 <taro.yamada@example.jp>", "2024年3月4日 9:12", "Anna", "見積書"),
            ("見積書を添付いたします。", "山田"),
        ),
        ("見積書を添付いたします。",),
    ),
    QuoteCase(
        "hotmail-date-block",
        AUTHOR_EN,
        "________________________________\nDate: Mon, 4 Mar 2024 09:12:33 +0100\nFrom: carol@example.com\n"
        "To: anna@example.com\nSubject: Plan\n\nDoes Thursday at 10 work for everyone?\nCarol Smith",
        QUOTED_EN,
    ),
    QuoteCase(
        "en-original-message",
        AUTHOR_EN,
        "-----Original Message-----\nFrom: Carol <carol@example.com>\nSent: Monday, March 4, 2024 9:12 AM\n"
        "To: Anna <anna@example.com>\nSubject: Plan\n\nDoes Thursday at 10 work for everyone?\nCarol Smith",
        QUOTED_EN,
    ),
    QuoteCase(
        "en-yahoo-original",
        AUTHOR_EN,
        "----- Original Message -----\nFrom: Carol <carol@example.com>\nTo: Anna <anna@example.com>\n"
        "Sent: Monday, March 4, 2024 9:12 AM\nSubject: Plan\n\nDoes Thursday at 10 work for everyone?\nCarol Smith",
        QUOTED_EN,
    ),
    QuoteCase(
        "en-outlook-mobile-unquoted",
        AUTHOR_EN,
        "On Mon, Mar 4, 2024 at 9:12 AM, Carol wrote:\nDoes Thursday at 10 work for everyone?\nCarol Smith",
        QUOTED_EN,
    ),
]

# More mailers: (name, history with {} where the quoted sentence goes), under the English author text.
_MORE = [
    ("claws-two-line", "On Mon, 4 Mar 2024 09:12:00 +0100\nCarol Smith <carol@example.com> wrote:\n\n> {}"),
    ("mutt-custom", "* Carol Smith <carol@example.com> [2024-03-04 09:12]:\n> {}"),
    ("horde-quoting", "Quoting Carol Smith <carol@example.com>:\n\n> {}"),
    ("yahoo-en", "On Monday, March 4, 2024, 09:12:33 AM GMT+1, Carol Smith <carol@example.com> wrote:\n\n\n> {}"),
    ("yahoo-fr", "Le lundi 4 mars 2024 à 09:12:33 UTC+1, Sophie Martin <sophie@example.fr> a écrit :\n\n> {}"),
    ("thunderbird-en", "On 3/4/24 9:12 AM, Carol Smith wrote:\n> {}"),
    ("thunderbird-de", "Am 04.03.2024 um 09:12 schrieb Hans Müller:\n>\n> {}\n>"),
    ("android-reply-message", "----- Reply message -----\nFrom: Carol Smith <carol@example.com>\n\n{}"),
    ("cs-separator", "-------- Původní zpráva --------\nOd: Jan Novák <jan@example.cz>\nDatum: 04.03.2024 9:12\n\n{}"),
    (
        "sv-outlook",
        "Från: Erik Svensson <erik@example.se>\nSkickat: den 4 mars 2024 09:12\nTill: Anna\nÄmne: Offert\n\n{}",
    ),
    (
        "pl-outlook",
        "Od: Piotr Nowak <piotr@example.pl>\nWysłano: poniedziałek, 4 marca 2024 09:12\nDo: Anna\nTemat: X\n\n{}",
    ),
    (
        "fi-outlook",
        "Lähettäjä: Matti Virtanen <matti@example.fi>\nLähetetty: maanantai 4. maaliskuuta 2024 9.12\n"
        "Vastaanottaja: Anna\nAihe: Tarjous\n\n{}",
    ),
    (
        "tr-outlook",
        "Kimden: Mehmet Yılmaz <m@example.com.tr>\nGönderildi: 4 Mart 2024 09:12\nKime: Anna\nKonu: Teklif\n\n{}",
    ),
    ("zh-outlook", "发件人: 李雷 <li.lei@example.cn>\n发送时间: 2024年3月4日 9:12\n收件人: Anna\n主题: 报价\n\n{}"),
    (
        "ko-outlook",
        "보낸 사람: 김민수 <minsu@example.kr>\n보낸 날짜: 2024년 3월 4일 월요일 오전 9:12\n"
        "받는 사람: Anna\n제목: 견적\n\n{}",
    ),
    (
        "md-bold-outlook",
        "**From:** Carol Smith <carol@example.com>\n**Sent:** Monday, March 4, 2024 9:12 AM\n**Subject:** Plan\n\n{}",
    ),
    ("fi-parenthesized", "ma 4.3.2024 klo 9.12 Matti Virtanen (matti@example.fi) kirjoitti:\n\n> {}"),
    ("zh-am-pm", "2024年3月4日 上午9:12，李雷 <li.lei@example.cn> 写道：\n\n> {}"),
]
_SENTENCE = "The quarterly numbers are attached for review."
BLOCK_CASES += [QuoteCase(name, AUTHOR_EN, history.format(_SENTENCE), (_SENTENCE,)) for name, history in _MORE]

QUOTE_CASES = ATTRIBUTION_CASES + BLOCK_CASES
