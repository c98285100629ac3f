"""Sentences for the synthesizers: a small grammar over an everyday vocabulary, weighted towards the
sounds a mouth shows (p, b, m, f, v, rounded and spread vowels). Deterministic for a seed."""
import random

NAMES = "Bob Pam Mary Peter Ben Molly Paul Bill Emma Tom Sue Anna Mike Rose Joe Kate Will Ruth Sam Amy Lou Fred Vera Max Luke Nina".split()
NOUNS = """map boat book pie moon spoon room ball cup bread milk apple baby mother father brother window
paper phone bottle table pencil picture garden beach mountain pool school shoe coat umbrella bus boot
box fish fruit movie music piano puppy bird cow horse goose road river tree rope soup beans peas
plum peach cheese coffee wool blue_moon kitchen office market museum bridge harbour village valley
problem promise moment number pocket button ribbon feather flower mirror member computer""".split()
ADJS = """big blue brown pink purple small warm cool new old cheap empty famous funny heavy humble
open pretty proud quiet rough smooth soft simple bumpy broken shiny muddy frozen ripe yellow green""".split()
VERBS_T = """bought moved opened found brought kept painted pushed pulled picked grabbed dropped bumped
mopped wiped packed fixed washed cooked baked boiled rolled loved viewed chose threw knew saw""".split()
VERBS_I = """smiled laughed waved moved slept hummed jumped swam walked voted shouted paused stopped
waited knocked""".split()
PLACES = """by the pool|near the museum|in the room|at the market|under the bridge|on the boat|
behind the barn|before the movie|over the moon|through the woods|beside the window|at home|
into the box|from the bottom|off the map""".replace("\n", "").split("|")
TIMES = "today|yesterday|every morning|at noon|at five|on Monday|in May|before lunch|soon|twice".split("|")
STARTS = "Oh,|Well,|So|Maybe|Perhaps|Look,|Wow,|Hmm,|Yes,|No,".split("|")
QUESTIONS = ["Why did {n} move the {o}?", "Who knew about the {a} {o}?", "Would you pass me the {o}?",
             "Do you remember the {a} {o}?", "How much is the {o}?", "Could {n} bring {num} {o}s?",
             "Where is my {o}?", "What happened to the {o} {p}?"]
NUMS = "two three four five six seven nine ten twelve twenty ninety hundred".split()


def sentence(rng):
    n = rng.choice(NAMES)
    n2 = rng.choice(NAMES)
    o = rng.choice(NOUNS).replace("_", " ")
    o2 = rng.choice(NOUNS).replace("_", " ")
    a = rng.choice(ADJS)
    vt = rng.choice(VERBS_T)
    vi = rng.choice(VERBS_I)
    p = rng.choice(PLACES)
    t = rng.choice(TIMES)
    num = rng.choice(NUMS)
    forms = [
        f"{n} {vt} the {a} {o} {p}.",
        f"{n} and {n2} {vi} {t}.",
        f"{rng.choice(STARTS)} {n.lower() if False else n} {vt} a {o} and a {a} {o2}.",
        f"The {a} {o} was {p}, {t}.",
        f"{n} {vt} {num} {o}s, then {vi}.",
        rng.choice(QUESTIONS).format(n=n, o=o, a=a, num=num, p=p),
        f"My {o} is {a}, but your {o2} is {rng.choice(ADJS)}.",
        f"{t.capitalize()}, {n} {vi} {p}.",
        f"Please put the {o} {p}!",
        f"We saw {num} {a} {o}s and {n2} {vi}.",
    ]
    return rng.choice(forms)


def sentences(count, seed):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = sentence(rng)
        # Sometimes two in one utterance, so pauses inside a clip occur too.
        if rng.random() < 0.3:
            s = f"{s} {sentence(rng)}"
        out.append(s)
    return out


if __name__ == "__main__":
    for s in sentences(10, 1):
        print(s)
