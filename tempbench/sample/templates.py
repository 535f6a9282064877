"""Question text for generated benchmark questions (SPEC §1.3, §5).

A gold chain ``(a, r1, o1), (o1, r2, o2), …`` is read as a nested noun phrase
built from the anchor outwards: ``the r2 of the r1 of <anchor>``. Each relation
has a noun template with one slot ``{x}`` for the inner phrase; relations
without one fall back to ``the <label> of {x}`` (or ``the entity that {x} is
<label>`` when the label already ends in a preposition, as "sponsor of" does).

The anchor is usually named by its label; sometimes by a shortened or altered
form (surname only, accents stripped, "X University" for "University of X", an
unlabelled entity's raw id), which is what makes a substring linker miss the
gold anchor on part of the questions, as it does on the real data.
"""

from __future__ import annotations

import unicodedata

import numpy as np

# noun templates of the object of each named property, ``{x}`` = the subject
NOUNS: dict[str, str] = {
    "P39": "the position held by {x}",
    "P54": "the sports team of {x}",
    "P6": "the head of government of {x}",
    "P35": "the head of state of {x}",
    "P26": "the spouse of {x}",
    "P108": "the employer of {x}",
    "P69": "the school {x} was educated at",
    "P102": "the political party of {x}",
    "P166": "the award received by {x}",
    "P27": "the country of citizenship of {x}",
    "P17": "the country of {x}",
    "P131": "the administrative territory containing {x}",
    "P150": "the territory contained in {x}",
    "P530": "the country {x} had diplomatic relations with",
    "P286": "the head coach of {x}",
    "P488": "the chairperson of {x}",
    "P1037": "the director of {x}",
    "P159": "the headquarters location of {x}",
    "P463": "the organisation {x} was a member of",
    "P118": "the league of {x}",
    "P551": "the residence of {x}",
    "P1344": "the event {x} participated in",
    "P710": "the participant of {x}",
    "P793": "the significant event of {x}",
    "P190": "the twin town of {x}",
    "P1308": "the officeholder of {x}",
    "P1346": "the winner of {x}",
    "P127": "the owner of {x}",
    "P1830": "the property of {x}",
    "P749": "the parent organization of {x}",
}
PERSON_OBJECT = frozenset({"P6", "P35", "P26", "P286", "P488", "P1037", "P1308", "P1346", "P710", "P161", "P112", "P1366", "P1365", "P1327"})
_TRAILING_LINKS = ("of", "in", "for", "with", "at", "by", "to")
# last words that mark a label as a thing's name, not "Given Surname"
_NAME_HEADS = frozenset({
    "Company", "Group", "Corporation", "Bank", "Railways", "Airlines", "Motors", "Steel", "Electric", "Press",
    "Insurance", "Holdings", "Institute", "Foundation", "Association", "Society", "Council", "Federation",
    "University", "College", "Party", "Union", "FC", "United", "City", "Prize", "Medal", "Award", "Springs",
})


def noun(rel_id: str, rel_label: str, inner: str) -> str:
    """Noun phrase naming the object of ``(inner, rel, ?)``."""
    if rel_id in NOUNS:
        return NOUNS[rel_id].format(x=inner)
    words = rel_label.split()
    if words and words[-1].lower() in _TRAILING_LINKS:
        return f"the entity that {inner} is {rel_label}"
    return f"the {rel_label} of {inner}"


def wh(rel_id: str) -> str:
    """Question word for the object of ``rel_id``."""
    return "Who" if rel_id in PERSON_OBJECT else "What"


def with_order_word(phrase: str, word: str) -> str:
    """``the X of …`` -> ``the first X of …`` (every noun phrase starts with ``the``)."""
    return "the " + word + " " + phrase[4:] if phrase.startswith("the ") else f"{word} {phrase}"


def strip_accents(text: str) -> str:
    """Remove combining marks and fold ß, as an English writer often does."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return folded.replace("ß", "ss").replace("ø", "o").replace("Ø", "O").replace("ł", "l").replace("Ł", "L")


def altered_surface(label: str, rng: np.random.Generator) -> str | None:
    """A shortened or altered way of writing ``label``, or ``None`` when none applies.

    Forms: accents stripped; "University of X" -> "X University"; "X FC" -> "X";
    a person-like "Given Surname" -> "Surname" or "G. Surname"; a long name ->
    its initials.
    """
    forms: list[str] = []
    plain = strip_accents(label)
    if plain != label:
        forms.append(plain)
    words = label.split()
    if label.startswith("University of ") and len(words) >= 3:
        forms.append(" ".join(words[2:]) + " University")
    for suffix in (" FC", " United", " Rovers", " Athletic", " SC"):
        if label.endswith(suffix) and len(label) > len(suffix) + 2:
            forms.append(label[: -len(suffix)] + " football club")
    if len(words) == 2 and all(w.isalpha() and w[:1].isupper() for w in words) and words[1] not in _NAME_HEADS:
        forms.append(words[1])
        forms.append(f"{words[0][0]}. {words[1]}")
    if len(words) >= 3:
        initials = "".join(w[0] for w in words if w[:1].isupper())
        if len(initials) >= 2:
            forms.append(initials)
    forms = [f for f in forms if f and f != label]
    if not forms:
        return None
    return forms[int(rng.integers(len(forms)))]


def question_text(
    operator: str,
    anchor_text: str,
    rel_ids: list[str],
    rel_labels: list[str],
    year: int,
    answer_object_label: str,
    rng: np.random.Generator,
    mention_year_in_interval: bool = False,
) -> str:
    """The question for a chain read from the anchor through ``rel_ids`` at ``year``."""
    phrase = anchor_text
    for k, (rid, rlab) in enumerate(zip(rel_ids, rel_labels, strict=True)):
        phrase = noun(rid, rlab, phrase)
        if k == 0 and operator in ("first", "last"):
            phrase = with_order_word(phrase, "first" if operator == "first" else "last")
    who = wh(rel_ids[-1])
    if operator == "interval":
        text = f"In which year was {answer_object_label} {phrase}"
        return text + (f", as recorded for {year}?" if mention_year_in_interval else "?")
    if operator == "before":
        return f"In the year before {year + 1}, {who.lower()} was {phrase}?"
    if operator == "after":
        return f"In the year after {year - 1}, {who.lower()} was {phrase}?"
    if operator in ("first", "last"):
        return f"{who} was {phrase}?"
    forms = (f"{who} was {phrase} in {year}?", f"In {year}, {who.lower()} was {phrase}?")
    return forms[int(rng.integers(len(forms)))]
