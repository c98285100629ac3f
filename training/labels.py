"""Phones of every synthesizer's phone set -> the 12 viseme classes, in the output order of
src/speech/viseme-model.ts (VISEME_CLASSES): cherry-lip-sync's order, so the service runs this model
exactly like the downloadable one."""

CLASSES = ["D", "B", "I", "G", "H", "A", "X", "E", "K", "J", "C", "F"]
AH, DEE, EE, FV, LL, M, REST, OH, R, S, UH, WOO = range(12)

# Lower-case ARPAbet (what src/speech/phones.ts normalises every timeline to).
ARPABET = {
    "aa": AH, "ay": AH, "aw": AH,
    "ae": UH, "ah": UH, "eh": UH, "hh": UH,
    "iy": EE, "ih": EE, "ey": EE, "y": EE,
    "ao": OH, "ow": OH, "oy": OH,
    "uw": WOO, "uh": WOO, "w": WOO,
    "er": R, "r": R,
    "p": M, "b": M, "m": M,
    "f": FV, "v": FV,
    "l": LL,
    "s": S, "z": S, "sh": S, "zh": S, "ch": S, "jh": S,
    "t": DEE, "d": DEE, "k": DEE, "g": DEE, "n": DEE, "ng": DEE, "th": DEE, "dh": DEE,
    "sil": REST,
}
# festival "radio" extras (kal, us1-3 mbrola voices in festival) fold onto ARPAbet.
RADIO_FOLD = {"ax": "ah", "axr": "er", "ix": "ih", "ux": "uw", "dx": "d", "nx": "n", "el": "l",
              "em": "m", "en": "n", "hv": "hh", "pau": "sil", "h#": "sil", "brth": "sil"}
# festival's British "mrpa" set (en1 mbrola voice).
MRPA = {
    "a": UH, "aa": AH, "ai": AH, "au": AH, "e": UH, "e@": UH, "ei": EE, "i": EE, "i@": EE, "ii": EE,
    "o": OH, "oi": OH, "oo": OH, "ou": OH, "u": WOO, "u@": WOO, "uu": WOO, "uh": UH, "@": UH, "@@": R,
    "#": REST, "y": EE, "h": UH,
}
# SAMPA as espeak-ng writes it for MBROLA (.pho) and as its own phoneme mnemonics.
SAMPA = {
    "i": EE, "i:": EE, "I": EE, "I2": EE, "I#": EE, "i@": EE, "i@3": EE, "eI": EE, "EI": EE, "j": EE,
    "E": UH, "e": UH, "{": UH, "a": UH, "a#": UH, "@": UH, "@2": UH, "@5": UH, "V": UH, "e@": UH,
    "E@": UH, "a2": UH, "h": UH, "E2": UH, "E3": UH, "@L": LL,
    "A": AH, "A:": AH, "aI": AH, "aU": AH, "A@": AH, "aa": AH, "aI@": AH, "aU@": AH, "aI3": AH,
    "O": OH, "O:": OH, "oU": OH, "@U": OH, "OI": OH, "O@": OH, "o@": OH, "o": OH, "Q": AH, "0": AH,
    "U": WOO, "u": WOO, "u:": WOO, "U@": WOO, "w": WOO, "W": WOO,
    "3:": R, "3": R, "r=": R, "@`": R, "r": R, "r-": R, "R": R, "R2": R, "3r": R,
    "p": M, "b": M, "m": M,
    "f": FV, "v": FV,
    "l": LL, "l/": LL, "L": LL, "5": LL,
    "s": S, "z": S, "S": S, "Z": S, "tS": S, "dZ": S, "z#": S,
    "t": DEE, "d": DEE, "k": DEE, "g": DEE, "n": DEE, "N": DEE, "T": DEE, "D": DEE, "t#": DEE,
    "d#": DEE, "?": DEE, "4": DEE, "n-": DEE, "t2": DEE, "d2": DEE, "x": DEE,
    "_": REST, "_:": REST, "_!": REST, "_^_": REST, "#": REST, "": REST,
}


def arpabet_class(phone):
    p = phone.lower().rstrip("012")
    p = RADIO_FOLD.get(p, p)
    return ARPABET.get(p)


def festival_class(phone, phoneset):
    if phoneset == "mrpa":
        c = MRPA.get(phone)
        if c is not None:
            return c
    return arpabet_class(phone)


def sampa_class(phone):
    p = phone.strip().lstrip("',%=")
    if p in SAMPA:
        return SAMPA[p]
    # Unlisted variants: try without trailing marks, then by their first symbol.
    for q in (p.rstrip(";:#23-"), p[:2], p[:1]):
        if q in SAMPA:
            return SAMPA[q]
    return None
