"""The values a comparison compares, read from answers as a small model writes them: dates
(:func:`date_of`), numbers (:func:`number_of`), and countries or nationalities as one name
(:func:`country_of`, :func:`a_country`)."""

from __future__ import annotations

import re

from sunar.text import countries, normalize_answer

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
_MONTH = {m: i for i, m in enumerate(_MONTHS, 1)} | {m[:3]: i for i, m in enumerate(_MONTHS, 1)} | {"sept": 9}
_DATE_WORDS = re.compile(r"[a-z]+|\d+", re.IGNORECASE)


def date_of(text: str) -> tuple[int, int, int] | None:
    """(year, month, day) of a date as answers write it ("2 May 1934", "May 2, 1934", "1934-05-02",
    "1934", "c. 1570", "44 BC"); 0 for a month or day not given. None without a year."""
    t = text.strip().lower().replace(",", " ")
    if m := re.search(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b", t):
        return int(m[1]), int(m[2]), int(m[3])
    tokens = _DATE_WORDS.findall(t)
    numbers = [int(x) for x in tokens if x.isdigit()]
    month = next((_MONTH[x] for x in tokens if x in _MONTH), 0)
    years = [n for n in numbers if n > 31]
    if len(years) != 1 and not (len(years) > 1 and len(set(years)) == 1):
        return None
    year = years[0]
    if re.search(r"\b(?:bc|bce)\b", t):
        year = -year
    days = [n for n in numbers if 1 <= n <= 31 and n != abs(year)]
    return year, month, days[0] if month and len(days) == 1 else 0


_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def number_of(text: str) -> float | None:
    """The one number an answer gives ("3", "three directors", "6,650 km"); None for none or several."""
    found = re.findall(r"-?\d[\d,]*(?:\.\d+)?", text)
    words = [float(_WORDS.index(w)) for w in normalize_answer(text).split() if w in _WORDS]
    values = [float(n.replace(",", "")) for n in found] + words
    return values[0] if len(values) == 1 else None


_DEMONYMS = {
    "american": "united states", "usa": "united states", "us": "united states", "u s": "united states", "united states of america": "united states",
    "america": "united states", "british": "united kingdom", "english": "united kingdom", "scottish": "united kingdom", "welsh": "united kingdom",
    "england": "united kingdom", "scotland": "united kingdom", "wales": "united kingdom", "uk": "united kingdom", "great britain": "united kingdom",
    "french": "france", "german": "germany", "italian": "italy", "spanish": "spain", "portuguese": "portugal", "dutch": "netherlands",
    "belgian": "belgium", "swiss": "switzerland", "austrian": "austria", "swedish": "sweden", "norwegian": "norway", "danish": "denmark",
    "finnish": "finland", "polish": "poland", "czech": "czech republic", "hungarian": "hungary", "romanian": "romania", "greek": "greece",
    "russian": "russia", "soviet": "soviet union", "ukrainian": "ukraine", "turkish": "turkey", "iranian": "iran", "persian": "iran",
    "indian": "india", "pakistani": "pakistan", "bangladeshi": "bangladesh", "chinese": "china", "japanese": "japan", "korean": "south korea",
    "south korean": "south korea", "filipino": "philippines", "indonesian": "indonesia", "thai": "thailand", "vietnamese": "vietnam",
    "australian": "australia", "canadian": "canada", "mexican": "mexico", "brazilian": "brazil", "argentine": "argentina",
    "argentinian": "argentina", "chilean": "chile", "colombian": "colombia", "peruvian": "peru", "cuban": "cuba", "egyptian": "egypt",
    "nigerian": "nigeria", "south african": "south africa", "israeli": "israel", "irish": "ireland", "new zealander": "new zealand",
    "icelandic": "iceland", "serbian": "serbia", "croatian": "croatia", "bulgarian": "bulgaria", "slovak": "slovakia", "estonian": "estonia",
    "latvian": "latvia", "lithuanian": "lithuania", "georgian": "georgia", "armenian": "armenia", "sri lankan": "sri lanka",
    "nepalese": "nepal", "malaysian": "malaysia", "singaporean": "singapore", "kenyan": "kenya", "ghanaian": "ghana", "moroccan": "morocco",
    "algerian": "algeria", "tunisian": "tunisia", "lebanese": "lebanon", "syrian": "syria", "iraqi": "iraq", "saudi": "saudi arabia",
    "afghan": "afghanistan", "venezuelan": "venezuela", "uruguayan": "uruguay", "bolivian": "bolivia", "ecuadorian": "ecuador",
    "jamaican": "jamaica", "haitian": "haiti", "dominican": "dominican republic", "puerto rican": "puerto rico", "paraguayan": "paraguay",
    "costa rican": "costa rica", "guatemalan": "guatemala", "honduran": "honduras", "salvadoran": "el salvador", "nicaraguan": "nicaragua",
    "panamanian": "panama", "trinidadian": "trinidad and tobago", "bahamian": "bahamas", "barbadian": "barbados", "bosnian": "bosnia and herzegovina",
    "slovenian": "slovenia", "slovene": "slovenia", "belarusian": "belarus", "albanian": "albania", "macedonian": "macedonia",
    "montenegrin": "montenegro", "moldovan": "moldova", "maltese": "malta", "cypriot": "cyprus", "luxembourgish": "luxembourg",
    "monegasque": "monaco", "azerbaijani": "azerbaijan", "kazakh": "kazakhstan", "kazakhstani": "kazakhstan", "uzbek": "uzbekistan",
    "kyrgyz": "kyrgyzstan", "tajik": "tajikistan", "turkmen": "turkmenistan", "mongolian": "mongolia", "taiwanese": "taiwan",
    "north korean": "north korea", "cambodian": "cambodia", "laotian": "laos", "burmese": "myanmar", "bhutanese": "bhutan",
    "maldivian": "maldives", "jordanian": "jordan", "kuwaiti": "kuwait", "emirati": "united arab emirates", "qatari": "qatar",
    "omani": "oman", "yemeni": "yemen", "bahraini": "bahrain", "libyan": "libya", "sudanese": "sudan", "ethiopian": "ethiopia",
    "eritrean": "eritrea", "somali": "somalia", "ugandan": "uganda", "tanzanian": "tanzania", "rwandan": "rwanda", "zambian": "zambia",
    "zimbabwean": "zimbabwe", "malawian": "malawi", "mozambican": "mozambique", "angolan": "angola", "namibian": "namibia",
    "botswanan": "botswana", "senegalese": "senegal", "malian": "mali", "cameroonian": "cameroon", "ivorian": "ivory coast",
    "beninese": "benin", "togolese": "togo", "liberian": "liberia", "sierra leonean": "sierra leone", "gambian": "gambia",
    "guinean": "guinea", "nigerien": "niger", "chadian": "chad", "malagasy": "madagascar", "mauritian": "mauritius",
    "cape verdean": "cabo verde", "fijian": "fiji", "samoan": "samoa", "tongan": "tonga", "papua new guinean": "papua new guinea",
    "northern irish": "united kingdom", "northern ireland": "united kingdom",
    # a country under another name than ISO's
    "cape verde": "cabo verde", "burma": "myanmar", "swaziland": "eswatini", "persia": "iran", "holland": "netherlands",
    "ceylon": "sri lanka", "siam": "thailand", "czechia": "czech republic", "cote divoire": "ivory coast", "côte divoire": "ivory coast",
    "east pakistan": "bangladesh", "democratic republic of congo": "dr congo", "drc": "dr congo",
}


def country_of(text: str) -> str:
    """A country or nationality as one name ("American", "USA" -> "united states"; "Paris, France" -> "france";
    "Lithuanian-American", as nationalities are written, by its last part -> "united states"; a country
    whose name ends with another's, "South Sudan", is itself)."""
    t = normalize_answer(text)
    if t not in _DEMONYMS and t not in countries() and " " in (spaced := normalize_answer(text.replace("-", " "))):
        last = spaced.rsplit(" ", 1)[-1]
        t = last if last in _DEMONYMS or (" " in t and last in _DEMONYMS.values()) else t
    return _DEMONYMS.get(t, t)


def a_country(text: str) -> bool:
    """Whether ``text`` names a country or a nationality (what "the same country" compares)."""
    said = country_of(text)
    return said in _DEMONYMS.values() or said in countries()
