"""Vocabulary for the generated world's English labels (SPEC §5).

Real Wikidata labels share tokens heavily (common given names and surnames,
"University of …", "… FC", "… Party"), repeat exactly (homonyms), and contain
non-ASCII text. The lists below are small on purpose: drawing from them with
Zipf-like weights makes the same tokens recur across thousands of labels, which
is what gives BM25 its ties and the substring linker its confusions.

Everything here is plain data plus pure functions of a ``numpy`` generator, so
the labels depend on the seed only.
"""

from __future__ import annotations

import numpy as np

GIVEN_NAMES: tuple[str, ...] = (
    "John", "Maria", "James", "Anna", "Robert", "Elena", "Michael", "Sofia", "William", "Laura",
    "David", "Julia", "Richard", "Sarah", "Thomas", "Emma", "Charles", "Marie", "Peter", "Olga",
    "Paul", "Claire", "George", "Eva", "Carlos", "Ana", "José", "Lucía", "François", "Hélène",
    "Jürgen", "Jörg", "Søren", "Zoë", "Łukasz", "Małgorzata", "Ignacio", "Andrés", "Mehmet", "Ayşe",
    "Hans", "Greta", "Luis", "Isabel", "Ahmed", "Fatima", "Ivan", "Natalia", "Pierre", "Camille",
    "Giovanni", "Francesca", "Marco", "Giulia", "Kenji", "Yuki", "Arjun", "Priya", "Chen", "Mei",
    "Erik", "Ingrid", "Lars", "Astrid", "Pedro", "Beatriz", "Stefan", "Katarina", "Henrik", "Nils",
    "Frank", "Helen", "Edward", "Margaret", "Henry", "Alice", "Samuel", "Ruth", "Daniel", "Grace",
    "Mário", "Joaquín", "Renée", "Céline", "André", "Tomás", "Dmitri", "Irina", "Omar", "Leila",
)

SURNAMES: tuple[str, ...] = (
    "Smith", "Johnson", "Brown", "Müller", "Schmidt", "García", "Martínez", "Rodríguez", "Rossi", "Russo",
    "Dubois", "Martin", "Bernard", "Ivanov", "Petrov", "Nowak", "Kowalski", "Jensen", "Hansen", "Nielsen",
    "Andersson", "Johansson", "Williams", "Jones", "Taylor", "Davies", "Wilson", "Evans", "Thomas", "Roberts",
    "Weber", "Wagner", "Becker", "Hoffmann", "Schäfer", "Koch", "Groß", "Fernández", "López", "González",
    "Silva", "Santos", "Ferreira", "Pereira", "Costa", "Bianchi", "Romano", "Colombo", "Ricci", "Marino",
    "Yılmaz", "Kaya", "Demir", "Sato", "Suzuki", "Takahashi", "Tanaka", "Kim", "Lee", "Park",
    "Singh", "Kumar", "Sharma", "Patel", "Khan", "Hassan", "Ali", "Novak", "Horvat", "Kovač",
    "Lefèvre", "Moreau", "Fontaine", "Girard", "Lambert", "Clark", "Lewis", "Walker", "Hall", "Allen",
    "Young", "King", "Wright", "Scott", "Green", "Baker", "Adams", "Nelson", "Hill", "Campbell",
    "Mitchell", "Carter", "Phillips", "Parker", "Turner", "Collins", "Edwards", "Stewart", "Morris", "Murphy",
)

# Whole CJK personal names: one \w+ token each, never split by the tokenizer.
CJK_NAMES: tuple[str, ...] = (
    "王伟", "李娜", "张伟", "刘洋", "陈静", "杨磊", "黄敏", "赵军", "周杰", "吴芳",
    "山田太郎", "鈴木花子", "佐藤健", "田中優子", "김민준", "이서연", "박지훈", "최유진",
)

SYLLABLES: tuple[str, ...] = (
    "bar", "cel", "ona", "val", "dor", "ia", "mar", "ton", "ber", "lin", "ham", "burg", "ville", "sta",
    "ros", "tov", "ka", "zan", "mir", "len", "gor", "ad", "ri", "nes", "port", "ford", "wick", "al",
    "sen", "ovo", "ec", "tra", "mon", "dal", "kir", "os", "lu", "vi", "ne", "ga",
)
PLACE_PREFIXES: tuple[str, ...] = ("", "", "", "", "", "", "", "", "San ", "Saint-", "New ", "Bad ", "Port ", "Nova ", "Santa ", "Fort ",
                                   "Los ", "Great ", "Upper ", "El ")
PLACE_SUFFIXES: tuple[str, ...] = ("", "", "", "", "", "", "", " City", "-sur-Mer", " Springs", "ów", "ö", "ø", "ão", "ßen", "é",
                                   " am Main", " del Mar", " Heights", "-en-Provence", " upon Tyne")

COUNTRY_NAMES: tuple[str, ...] = (
    "France", "Germany", "Italy", "Spain", "Portugal", "Poland", "Sweden", "Norway", "Denmark", "Finland",
    "Greece", "Turkey", "Japan", "China", "India", "Brazil", "Argentina", "Chile", "Peru", "Mexico",
    "Canada", "Australia", "Egypt", "Kenya", "Nigeria", "Ghana", "Austria", "Hungary", "Romania", "Bulgaria",
    "Ireland", "Iceland", "Belgium", "Netherlands", "Switzerland", "Croatia", "Serbia", "Slovenia", "Estonia", "Latvia",
    "Lithuania", "Ukraine", "Georgia", "Armenia", "Iran", "Iraq", "Israel", "Jordan", "Morocco", "Tunisia",
    "Senegal", "Colombia", "Venezuela", "Ecuador", "Bolivia", "Uruguay", "Paraguay", "Cuba", "Jamaica", "Panama",
    "Vietnam", "Thailand", "Indonesia", "Malaysia", "Philippines", "Mongolia", "Nepal", "Pakistan", "Bangladesh", "Sri Lanka",
    "United States", "United Kingdom", "South Africa", "New Zealand", "South Korea", "Czech Republic", "Côte d'Ivoire",
    "São Tomé and Príncipe", "Türkiye", "Luxembourg", "Malta", "Cyprus", "Albania", "Moldova", "Belarus",
)

PORTFOLIOS: tuple[str, ...] = (
    "Finance", "Foreign Affairs", "Defence", "Justice", "Education", "Health", "Agriculture", "Labour",
    "Transport", "Culture", "the Interior", "Trade", "Energy", "the Environment", "Science",
)
PARTY_ADJECTIVES: tuple[str, ...] = (
    "Liberal", "Conservative", "Social Democratic", "Socialist", "Green", "Christian Democratic", "Labour",
    "People's", "National", "Democratic", "Progressive", "Republican", "Communist", "Agrarian", "Centre",
)
ORG_WORDS: tuple[str, ...] = (
    "Atlas", "Nordic", "Pacific", "Union", "Royal", "Continental", "General", "United", "Global", "Central",
    "Imperial", "Eastern", "Western", "Northern", "Southern", "Standard", "Pioneer", "Summit", "Crown", "Delta",
)
ORG_KINDS: tuple[str, ...] = (
    "Company", "Group", "Corporation", "Bank", "Railways", "Airlines", "Motors", "Steel", "Electric", "Press",
    "Insurance", "Holdings", "Institute", "Foundation", "Association", "Society", "Council", "Federation",
)
TEAM_PATTERNS: tuple[str, ...] = (
    "{} FC", "FC {}", "{} United", "Real {}", "{} Rovers", "{} Athletic", "{} City FC", "Sporting {}", "{} SC", "AC {}",
)
UNIVERSITY_PATTERNS: tuple[str, ...] = (
    "University of {}", "University of {}", "{} University", "{} Institute of Technology", "{} State University",
    "Technical University of {}", "{} College", "Université de {}", "Universität {}",
)
AWARD_PATTERNS: tuple[str, ...] = (
    "{s} Prize", "{s} Medal", "Order of {w}", "{c} Medal of {f}", "Grand Prix of {c}", "{s} Award for {f}",
    "Order of Merit of {c}", "Prize for {f}",
)
FIELDS: tuple[str, ...] = (
    "Literature", "Physics", "Chemistry", "Medicine", "Peace", "Architecture", "Music", "Film", "Journalism",
    "Mathematics", "Engineering", "Sport", "Painting", "Poetry", "Economics",
)
EVENT_PATTERNS: tuple[str, ...] = (
    "{y} {c} general election", "{y} Summer Games", "{y} {c} Cup", "Siege of {c}", "{y} {c} referendum",
    "{y} World Congress of {f}", "{c} Expo {y}", "Battle of {c}", "{y} {c} Marathon",
)
# Generic property labels: "<role> of|for" or "<modifier> <noun>", drawn without
# replacement so every generated property has its own label, as on Wikidata.
GENERIC_ROLES: tuple[str, ...] = (
    "sponsor", "patron", "partner", "operator", "affiliate", "founder", "rival", "host", "successor",
    "predecessor", "contributor", "supporter", "licensee", "representative",
)
GENERIC_ROLE_LINKS: tuple[str, ...] = ("of", "for")
GENERIC_MODIFIERS: tuple[str, ...] = (
    "affiliated", "associated", "operating", "licensed", "represented", "partner", "regional", "founding",
    "supervising", "hosting", "funding", "competing",
)
GENERIC_NOUNS: tuple[str, ...] = (
    "organisation", "region", "venue", "event", "body", "authority", "entity", "project", "network", "agency",
    "district", "programme", "delegation", "league", "publication", "club", "office", "collection", "council", "territory",
)


def zipf_weights(n: int, exponent: float = 1.0) -> np.ndarray:
    """Normalised weights ``w_i ∝ 1 / (i + 1) ** exponent`` for ``i < n``."""
    w = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** exponent
    return w / w.sum()


def pick(rng: np.random.Generator, vocab: tuple[str, ...], size: int, exponent: float = 0.9) -> list[str]:
    """``size`` draws from ``vocab`` with Zipf weights (early entries are common)."""
    idx = rng.choice(len(vocab), size=size, p=zipf_weights(len(vocab), exponent))
    return [vocab[i] for i in idx.tolist()]


def place_names(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` pronounceable place names, some multi-word, some non-ASCII, some repeated."""
    n_syl = rng.integers(2, 4, size=n)
    syl = rng.integers(0, len(SYLLABLES), size=(n, 3))
    pre = rng.choice(len(PLACE_PREFIXES), size=n)
    suf = rng.choice(len(PLACE_SUFFIXES), size=n)
    out: list[str] = []
    for i in range(n):
        stem = "".join(SYLLABLES[j] for j in syl[i, : n_syl[i]].tolist()).capitalize()
        out.append(f"{PLACE_PREFIXES[pre[i]]}{stem}{PLACE_SUFFIXES[suf[i]]}")
    return out


NAME_PARTICLES: tuple[str, ...] = ("de", "da", "van", "von", "del", "dos", "di", "bin", "al", "le")


def person_names(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` person names: Zipf-drawn given name + surname (common ones recur, so
    homonyms occur), with lengths from one token to five as in Wikidata: about 3%
    CJK, 5% single names, then middle initials, double surnames, two given names,
    particles ("da", "van"). Varied lengths keep BM25 from tying every pair of
    people on document length alone."""
    given = pick(rng, GIVEN_NAMES, n, 0.6)
    given2 = pick(rng, GIVEN_NAMES, n, 0.4)
    family = pick(rng, SURNAMES, n, 0.5)
    second = pick(rng, SURNAMES, n, 0.3)
    particle = pick(rng, NAME_PARTICLES, n, 0.8)
    kind = rng.random(n)
    initials = rng.integers(0, 26, size=n)
    cjk = rng.integers(0, len(CJK_NAMES), size=n)
    n_syl = rng.integers(2, 4, size=n)
    syl = rng.integers(0, len(SYLLABLES), size=(n, 3))
    out: list[str] = []
    for i in range(n):
        k = kind[i]
        g, f, f2 = given[i], family[i], second[i]
        if k < 0.03:
            out.append(CJK_NAMES[cjk[i]])
        elif k < 0.08:
            # a single (stage / regnal) name: one rare token
            out.append("".join(SYLLABLES[j] for j in syl[i, : n_syl[i]].tolist()).capitalize())
        elif k < 0.18:
            out.append(f"{g} {chr(65 + int(initials[i]))}. {f}")
        elif k < 0.25 and f2 != f:
            out.append(f"{g} {f}{'-' if k < 0.22 else ' '}{f2}")
        elif k < 0.35 and given2[i] != g:
            out.append(f"{g} {given2[i]} {f}")
        elif k < 0.50 and f2 != f:
            out.append(f"{g} {particle[i]} {f} {f2}")
        elif k < 0.55 and f2 != f and given2[i] != g:
            out.append(f"{g} {given2[i]} {particle[i]} {f} {f2}")
        else:
            out.append(f"{g} {f}")
    return out


def generic_relation_labels(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct property labels shaped like real ones ("sponsor of", "affiliated region", …)."""
    forms = [f"{r} {link}" for r in GENERIC_ROLES for link in GENERIC_ROLE_LINKS]
    forms += [f"{m} {x}" for m in GENERIC_MODIFIERS for x in GENERIC_NOUNS if m != x]
    if n > len(forms):
        forms += [f"{f} ({i})" for i in range(2, 2 + (n - len(forms)) // len(forms) + 1) for f in list(forms)]
    idx = rng.choice(len(forms), size=n, replace=False)
    return [forms[i] for i in idx.tolist()]
