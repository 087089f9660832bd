"""The Lisbon offsite thread: eight messages in English and French, quoting each other the way three mail programs
do (Gmail in English, Gmail in French, Outlook's unmarked header block), with a budget spreadsheet, two versions
of an agenda document, a venue quote PDF and a venue photo.

It is what `gmail_get_thread` and `gmail_read_attachment` are shown on: every reply repeats the history, and
none of it should reach the reader twice.
"""

from __future__ import annotations

import datetime as dt
from email.message import Message

from .builders import attachment, container, pdf, png
from .content import ALEX, ANA, FRANCOIS, PRIYA, Mail, ago, alt_gmail, plain, t, with_files
from .office import docx, xlsx

LABELS = "Inbox, Work, Travel"
_XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
SUBJECT = "Lisbon offsite: venue, agenda and budget"

BUDGET_XLSX = xlsx(
    {
        "Budget": [
            ["Item", "Unit cost (EUR)", "Quantity", "Total (EUR)", "Notes"],
            ["Venue: Casa do Largo, Alfama (2 days)", 1800, 1, 1800, "includes projector and coffee"],
            ["Hotel Lisboa Rio, standard room", 145, 18, 2610, "6 people x 3 nights"],
            ["Team dinner at Taberna da Rua", 55, 6, 330, "Thursday evening"],
            ["Flights (average per person)", 420, 6, 2520, "book before Dec 1"],
            ["Sintra day trip (train + guide)", 60, 6, 360, "optional, Saturday"],
            ["Total", None, None, 7620, "cap approved by Priya: 8,000"],
        ],
        "Attendees": [
            ["Name", "Team", "Arrives", "Departs"],
            ["Alex Chen", "Platform", dt.date(2026, 12, 9), dt.date(2026, 12, 12)],
            ["Ana Souza", "Operations", dt.date(2026, 12, 9), dt.date(2026, 12, 13)],
            ["François Dubois", "Finance", dt.date(2026, 12, 10), dt.date(2026, 12, 12)],
            ["Priya Natarajan", "Product", dt.date(2026, 12, 9), dt.date(2026, 12, 12)],
            ["Marcus Webb", "Architecture", dt.date(2026, 12, 9), dt.date(2026, 12, 12)],
            ["Dana Whitfield", "Payments", dt.date(2026, 12, 10), dt.date(2026, 12, 12)],
        ],
    }
)


def _agenda(version: str, day_two: list[str]) -> bytes:
    return docx(
        [
            ("heading", 1, f"Lisbon offsite agenda ({version})"),
            "Casa do Largo, Rua de São Miguel 12, Alfama. Doors open at 8:30; lunch is catered on site.",
            ("heading", 2, "Thursday 10 December"),
            ("bullet", "9:00 Welcome and goals for 2027 (Priya)"),
            ("bullet", "10:30 Phoenix retrospective: what the canary taught us (Alex)"),
            ("bullet", "14:00 Payments roadmap and the vendor decision (Dana)"),
            ("bullet", "19:30 Team dinner at Taberna da Rua"),
            ("heading", 2, "Friday 11 December"),
            *[("bullet", item) for item in day_two],
            ("heading", 2, "Who presents what"),
            (
                "table",
                [
                    ["Session", "Owner", "Length"],
                    ["Goals for 2027", "Priya Natarajan", "60 min"],
                    ["Phoenix retrospective", "Alex Chen", "90 min"],
                    ["Budget review", "François Dubois", "45 min"],
                ],
            ),
        ],
        title=f"Lisbon offsite agenda {version}",
    )


AGENDA_V1_DOCX = _agenda(
    "draft v1",
    ["9:00 Budget review for 2027 (François)", "11:00 Hiring plan", "13:00 Wrap-up and flights home"],
)
AGENDA_V2_DOCX = _agenda(
    "v2, final",
    [
        "9:00 Budget review for 2027 (François), with the Q4 actuals",
        "10:30 On-call rotation and incident reviews (Ana)",
        "12:30 Wrap-up; the Sintra trip leaves at 14:00 for those staying",
    ],
)
VENUE_QUOTE_PDF = pdf(
    "Casa do Largo - quote 2026-118",
    [
        "Client: Example Corp, attn. Ana Souza",
        "Event: team offsite, 10-11 December 2026, main room (20 seats)",
        "Room hire, 2 days: EUR 1,500.00",
        "Coffee breaks and catered lunch, 6 people x 2 days: EUR 300.00",
        "Total: EUR 1,800.00 (VAT included). Deposit of 30% due by 25 November 2026.",
        "Cancellation free of charge until 1 December 2026.",
    ],
)


def _venue_photo() -> bytes:
    palette = [(237, 201, 143), (196, 77, 52), (90, 143, 190), (250, 250, 245)]
    rows = [
        [2 if y < 14 else 3 if (x // 8 + y // 6) % 5 == 0 else 0 if y < 34 else 1 for x in range(80)] for y in range(48)
    ]
    return png(80, 48, palette, rows)


def _final_agenda(body: str) -> Message:
    return container(
        "mixed",
        alt_gmail(body),
        attachment("offsite-agenda-v2.docx", _DOCX, AGENDA_V2_DOCX),
        attachment("Casa-do-Largo-quote-2026-118.pdf", "application/pdf", VENUE_QUOTE_PDF),
        attachment("casa-do-largo-main-room.png", "image/png", _venue_photo()),
    )


def offsite_mails() -> list[Mail]:
    return [
        Mail(
            "offsite-1",
            ago(24, 3),
            ANA,
            (ALEX, FRANCOIS, PRIYA),
            LABELS,
            SUBJECT,
            t("""
             Hi all,

             Proposal for the December offsite in Lisbon: Thursday 10 and Friday 11 December, at Casa do Largo in
             Alfama. It is a ten-minute walk from the hotel and has a room for twenty with a projector.

             The budget is in the attached spreadsheet: 7,620 EUR for six people, under the 8,000 cap. Flights are
             the biggest line, so please book before December 1.

             What would you like on the agenda? I will put a first draft together by the end of the week.

             Ana
             """),
            body=with_files(alt_gmail, attachment("offsite-budget.xlsx", _XLSX, BUDGET_XLSX)),
        ),
        Mail(
            "offsite-2",
            ago(23, 20),
            FRANCOIS,
            (ANA,),
            LABELS,
            text=t("""
             Bonjour Ana,

             Merci pour la proposition, le lieu à Alfama me convient parfaitement. Pour le budget, je valide les
             7 620 EUR ; pensez seulement à demander une facture au nom de la société pour la salle.

             Je propose d'ajouter une revue du budget 2027 le vendredi matin, avec les chiffres réels du quatrième
             trimestre. Quarante-cinq minutes devraient suffire.

             Bien à vous,
             François
             """),
            cc=(ALEX, PRIYA),
            reply_to="offsite-1",
            quote_style="gmail-fr",
            body=alt_gmail,
        ),
        Mail(
            "offsite-3",
            ago(23, 4),
            ALEX,
            (ANA, FRANCOIS),
            "Sent, Work, Travel",
            text=t("""
             Thanks Ana, Casa do Largo looks great. +1 to François's budget review on Friday morning.

             I can run a Phoenix retrospective on Thursday: ninety minutes on what the canary taught us, with the
             dashboards from November. I land on the 9th in the evening.

             Alex
             """),
            cc=(PRIYA,),
            reply_to="offsite-2",
            body=alt_gmail,
        ),
        Mail(
            "offsite-4",
            ago(22, 1),
            ANA,
            (ALEX, FRANCOIS, PRIYA),
            LABELS,
            text=t("""
             Here is a first draft of the agenda (attached). I put the retrospective on Thursday morning and the
             budget review on Friday at nine. Priya, could you open with the goals for 2027?

             One open question: do we keep Friday afternoon free for the Sintra trip, or end at lunch?

             Ana
             """),
            reply_to="offsite-3",
            body=with_files(alt_gmail, attachment("offsite-agenda-draft-v1.docx", _DOCX, AGENDA_V1_DOCX)),
        ),
        Mail(
            "offsite-5",
            ago(21, 5),
            FRANCOIS,
            (ANA, ALEX, PRIYA),
            LABELS,
            text=t("""
             Bonjour à tous,

             Le brouillon me va très bien. Je préfère finir à l'heure du déjeuner le vendredi : plusieurs d'entre
             nous rentrent le soir même, et ceux qui restent pourront faire l'excursion à Sintra le samedi.

             François
             """),
            reply_to="offsite-4",
            quote_style="gmail-fr",
            body=alt_gmail,
        ),
        Mail(
            "offsite-6",
            ago(19, 2),
            PRIYA,
            (ANA, ALEX, FRANCOIS),
            LABELS,
            text=t("""
             Happy to open with the 2027 goals, one hour is plenty.

             Agree with François: let's end Friday at lunch and make Sintra an optional Saturday trip. Ana, can
             you also fit in a slot for the on-call rotation? That came up in every retro this quarter.

             Priya
             """),
            reply_to="offsite-5",
            quote_style="outlook",
            headers=(("X-Mailer", "Microsoft Outlook 16.0"),),
            body=plain,
        ),
        Mail(
            "offsite-7",
            ago(15, 3),
            ANA,
            (ALEX, FRANCOIS, PRIYA),
            "Inbox, Starred, Work, Travel",
            text=t("""
             Final agenda attached (v2): the on-call rotation is in on Friday at 10:30, we wrap up at 12:30, and the
             Sintra trip is on Saturday for whoever stays.

             I also attached the venue's quote and a photo of the main room. The deposit (30%) is due by
             25 November; François, could you approve it?

             Ana
             """),
            reply_to="offsite-6",
            body=_final_agenda,
        ),
        Mail(
            "offsite-8",
            ago(12, 6),
            FRANCOIS,
            (ANA,),
            "Inbox, Unread, Work, Travel",
            text=t("""
             Bonjour Ana,

             L'acompte de 540 EUR est approuvé, le virement partira lundi. Alex, peux-tu confirmer ton vol avant
             le 1er décembre ? Il me manque encore ton numéro de réservation pour la note de frais.

             Merci à tous, à bientôt à Lisbonne !
             François
             """),
            cc=(ALEX, PRIYA),
            reply_to="offsite-7",
            quote_style="gmail-fr",
            body=plain,
        ),
    ]
