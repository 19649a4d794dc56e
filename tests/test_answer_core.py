"""The `core` equivalence: sentence answers that add the same thing to the question are one answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfpara.models.client import ModelClient
from selfpara.pipeline.equivalence import Equivalence, build_equivalence
from selfpara.pipeline.equivalence.answer_core import answer_core, is_yes_no_question, same_core

FRANCE = "What is the capital of France?"

SAME = [
    # the issue's own quick-start answers, which made three clusters out of one answer
    (FRANCE, "The capital of France is Paris.", "The capital of France's country is Paris."),
    (FRANCE, "The capital of France is Paris.", "The capital city of France's nation is Paris."),
    (FRANCE, "The capital of France's country is Paris.", "The capital city of France's nation is Paris."),
    ("What is the capital of Italy?", "The capital of Italy is Rome.", "The capital city of Italy is Rome."),
    ("What is 2+2?", "2 + 2 equals 4.", "The sum of 2 and 2 is 4."),
    ("How many legs does a spider have?", "A spider has eight legs.", "Spiders have 8 legs."),
    ("Is the Earth round?", "Yes, the Earth is round.", "Yes, it is roughly spherical."),
    ("What gas do plants absorb?", "Plants absorb carbon dioxide.", "Carbon dioxide is absorbed by plants."),
    # a longer answer may add details to what the shorter one states
    ("Who painted the Mona Lisa?", "Leonardo da Vinci.", "It was painted by Leonardo da Vinci in Florence."),
    # a name of several words that only a framing word ("north") sets apart from the question's (ComQA dev)
    (
        "What sea separates gb from scandinavia?",
        "The sea that separates GB from Scandinavia is the North Sea.",
        "The sea that separates the United Kingdom (UK) from Scandinavia is the North Sea.",
    ),
    ("When did napoleon die?", "Napoleon Bonaparte died on May 5, 1821.", "He died on 5 May 1821."),
    # found reading NQ-open's held-out votes: an acronym the answer spells out in brackets, the question's own
    # words capitalised as a name, a compound with and without its hyphen
    (
        "Who decides where the super bowl is played?",
        "The Super Bowl is played by the National Football League (NFL).",
        "The organization that decides where the Super Bowl is played is the NFL (National Football League).",
    ),
    (
        "Which mirror is used in vehicles for rear view?",
        "The mirror used in vehicles for rear view is typically a rear-view mirror.",
        "The mirror used in vehicles for rear view is called a rearview mirror.",
    ),
]

# The gaps the labelled pairs showed (research/data/answer_pairs.jsonl), each in the model's own words.
GAPS_SAME = {
    "answer in a later sentence": (
        "In which country is Machu Picchu?",
        "Machu Picchu is located in Peru.",
        "Machu Picchu is a pre-Columbian Inca city built on mountain slopes containing famous ruins of Machu "
        "Picchu and Sacsacuampuahui. It is located in the Andes Mountains in Peru.",
    ),
    "answer last, after context": (
        "What process do plants use to make food from sunlight?",
        "The process plants use to make food from sunlight is photosynthesis.",
        "Plant cells use Chlorophyll, an pigment found in leaves, to capture sunlight and convert it into chemical "
        "energy. This energy is stored in a molecule called glucose, which is the primary food for plants. The "
        "process of this conversion is known as photosynthesis.",
    ),
    "'not only' is no denial": (
        "What sweet food do honeybees make?",
        "The sweet food made by honeybees is honey.",
        "Upon examining a篱 to find a honeybee hive, not only can you observe the extraordinary lilac fragrance "
        "coming from the hive but also be able to taste it. In fact, honey is a sweet liquid made by honeybees, "
        "derived from nectar collected by the bees from flowers.",
    ),
    "an aside in mid-sentence": (
        "Which part of the cell is known as the powerhouse of the cell?",
        "The powerhouse of the cell is the mitochondria.",
        "The powerhouse of the cell, which is part of the cell's homeostasis and reconstruction, is the mitochondria.",
    ),
    "a bracketed aside in another script": (
        "What is the capital of Uganda?",
        "The capital of Uganda is Kampala.",
        "Additive (उपकालमुक्त: जर्जुसर), also known as Kampala, is the capital of Uganda.",
    ),
    "an aside that is the answer": (
        "On which continent is Norway?",
        "Norway is located on the European continent.",
        "Norway is on the Northern hemisphere, located in Europe.",
    ),
    "a name among Chinese words, Mt for Mount": (
        "What is the tallest mountain in the world?",
        "The tallest mountain in the world is Mount Everest, which stands at 8,848 meters (29, 829 feet) above sea "
        "level.",
        "Mt Everest,世界上最高的山峰，海拔8,848米（29, 791英尺）。",
    ),
    "a region of the continent": (
        "On which continent is Kenya?",
        "Kenya is located in East Africa.",
        "Kenya is located in the sub-Saharan region of Africa.",
    ),
    "a place named variously": (
        "What is the capital of Mexico?",
        "Mexico City is Mexico's capital.",
        "The capital of Mexico is the city of Mexico.",
    ),
    # issue 37's renamings ask "which city is X governed from?": the answer is made of the question's words
    "a name made of the question's words": (
        "From which city is Belize governed?",
        "Belize is governed from Belize City.",
        "The seat of government of Belize is Belize City.",
    ),
    "a name that abbreviates the question's": (
        "Who was the first President of the United States?",
        "The first President of the United States was George Washington.",
        "The first US President was George Washington.",
    ),
    "a name that holds a common noun of the question": (
        "Which river flows through Budapest?",
        "The river that flows through Budapest is the Danube.",
        "Budapest lies on the Danube River.",
    ),
    "the same date, named differently": (
        "In what year did the Titanic sink?",
        "The RMS Titanic went down on April 15, 1912.",
        "Based on the Britannic ss titanic sinking record, the Titanic sank on April 15, 1912.",
    ),
    # the held-out round final2 (research/data/answer_pairs_final2.jsonl) showed these, scored once before
    "a participle clause after the answer": (
        "On which continent is Poland?",
        "Poland lies in Europe.",
        "Poland is located in Central Europe, bordering the Baltic Sea to the north, the Adriatic Sea to the south, "
        "and the North Sea to the west.",
    ),
    "an adjective of the answer's name, a compass region": (
        "On which continent is Vietnam?",
        "Vietnam is located on the Southeastern continent of Asia.",
        "Vietnam belongs to the Southeast Asian continent.",
    ),
    "the question's name as an adjective, another noun for the question's": (
        "What is the currency of India?",
        "The money used in India is called rupee.",
        "The currency of India is the Indian Rupee (INR).",
    ),
}

GAPS_OPEN = {
    "another name where the other has the question's in another form": (
        "What is the currency of India?",
        "The currency of India is the Pakistani Rupee.",
        "The currency of India is the Indian Rupee (INR).",
    ),
    "a participle clause does not hide a different answer": (
        "On which continent is Egypt?",
        "Egypt is in North Africa, bordering the Mediterranean Sea.",
        "Egypt is in Asia, bordering the Mediterranean Sea.",
    ),
    "a name made of the question's words, against another name": (
        "Belize's capital is which city?",
        "Belize's capital is Belmopan.",
        "The capital of Belize is Belize City.",
    ),
    # the question's own word dropped from the name: a different (wrong) answer
    "half a name": (
        "What is the capital of Mexico?",
        "The capital of Mexico is Mexico City.",
        "The capital of Mexico is City, which is also the largest city in the country.",
    ),
    # a later sentence agrees, but the first denies what the other states
    "a denial first": (
        "What is the capital of Ethiopia?",
        "The capital of Ethiopia is Addis Ababa.",
        "Ethiopia currently has no official capital city. It's currently using Addis Ababa as its provisional "
        "capital, but there have been plans to establish a new capital in the near future.",
    ),
    # another sentence names something else: no sentence of one agrees with the other
    "different answers in every sentence": (
        "What is the capital of Australia?",
        "Sydney is the capital of Australia.",
        "The capital of Australia is Canberra. It lies in the Australian Capital Territory.",
    ),
    # a first sentence that restates the question is the answer; a later one naming the other's is not
    "a later sentence that is no answer": (
        "What is the capital of Australia?",
        "Sydney is the capital of Australia.",
        "The capital of Australia is Canberra. Sydney is the largest city.",
    ),
}


@pytest.mark.parametrize("gap", GAPS_SAME)
def test_the_gaps_found_on_labelled_pairs_now_merge(gap: str) -> None:
    question, a, b = GAPS_SAME[gap]
    assert same_core(question, a, b) is True
    assert same_core(question, b, a) is True


@pytest.mark.parametrize("gap", GAPS_OPEN)
def test_pairs_near_those_gaps_that_differ_stay_open(gap: str) -> None:
    question, a, b = GAPS_OPEN[gap]
    assert same_core(question, a, b) is None
    assert same_core(question, b, a) is None


# what a specifying aside names is the answer the words before it frame (NQ-open, development reading)
SAME += [
    (
        "What book of the bible is the song of solomon in?",
        "The song of Solomon is a chapter in the Bible, specifically in the Book of Proverbs.",
        "The song of Solomon is in the Book of Proverbs.",
    ),
    (
        "What are bulls used for on a farm?",
        "Bulls are used on a farm for various purposes, including breeding, fertilizing, and raising livestock.",
        "Bulls on a farm are used for breeding and raising livestock.",
    ),
]

UNDECIDED = [
    ("What is 2+2?", "2 + 2 equals 4.", "2 + 2 equals 5."),
    ("What is the capital of Australia?", "The capital of Australia is Canberra.", "It is Sydney."),
    # a negation on one side only: the same names, opposite claims
    ("What is the capital of Australia?", "Canberra is the capital.", "Canberra is not the capital; Sydney is."),
    ("Is the Earth flat?", "Yes, it is.", "No, it is not."),
    # the two answers each name something the other does not
    ("Who wrote the Federalist Papers?", "Hamilton and Madison wrote them.", "Madison and Jay wrote them."),
    # an answer that only repeats the question states nothing to compare
    (FRANCE, "The capital of France.", "The capital of France is Paris."),
    ("What sea separates gb from scandinavia?", "It is the North Sea.", "It is the South China Sea."),
    # the same day of another month: "May" is a stopword, but in a date it is the month (ComQA, held out)
    (
        "When did napoleon die?",
        "Napoleon Bonaparte died on January 5, 1821.",
        "Napoleon Bonaparte died on May 5, 1821.",
    ),
    # an acronym another name spells out is that name, not every acronym's
    (
        "Who decides where the super bowl is played?",
        "The NFL (National Football League) decides.",
        "The AFL (American Football League) decides.",
    ),
    # a list and one of its names: the initials ("John F. Kennedy") do not cut the list into sentences
    (
        "What was the name of john f kennedy's vice president?",
        "John F. Kennedy's vice presidents were Robert F. Kennedy and Lyndon B. Johnson.",
        "The name of John F. Kennedy's vice president was Robert F. Kennedy.",
    ),
    # a specifying aside that names something else does not make two answers one
    (
        "What book of the bible is the song of solomon in?",
        "The song of Solomon is a chapter in the Bible, specifically in the Book of Psalms.",
        "The song of Solomon is in the Book of Proverbs.",
    ),
    # a hyphen is joined, but a negation's stays: "non-stop" is not "stop"
    ("What kind of flight is it?", "It is a non-stop flight.", "It is a stop flight."),
    # the vote's own pairs, labelled by hand (ComQA held-out rest, research/data/hearing_rest.md):
    # two days of one month and year share their last number, not their date
    (
        "Which date was facebook launched by mark zuckerberg?",
        "Facebook was launched on June 26, 2004.",
        "Facebook was launched on June 4, 2004.",
    ),
    # a "when" answered by one side only
    (
        "When did mark zuckerburg invent facebook?",
        "Mark Zuckerberg invented Facebook in 2004.",
        "The inventor of Facebook is Mark Zuckerberg.",
    ),
    # the dates a "when" asks for said in an aside are not cut with it
    (
        "When was lincoln president of the us?",
        "Abraham Lincoln was the 16th President of the United States, serving from March 4, 1861, to April 15, 1865.",
        "Lincoln was the 16th President of the United States.",
    ),
    # a numbered list is read whole: its pieces are no answers of their own
    (
        "What is the head office postal address for sainsbury's?",
        "The head office of Sainsbury's is located at 1000 Park Lane, London, England.",
        "The head office postal address for Sainsbury is:\n\n1. 1000 Queen Elizabeth Street\n2. London\n3. England"
        "\n4. United Kingdom\n\nThis address is the official address of Sainsbury's headquarters.",
    ),
    # two numbered lists that each name countries the other does not, read as lists, not item by item
    (
        "Which countries touch both the atlantic and pacific ocean?",
        "The countries that touch both oceans are:\n1. Canada\n2. United States\n3. Mexico\n4. Chile\n5. Peru",
        "The countries that touch both oceans are:\n1. Canada\n2. United States\n3. Mexico\n4. Brazil\n5. Australia",
    ),
    # two long lists of three: their last marker ("3.") is no worked result they share
    (
        "What are the three fifty shades of grey books?",
        'The three fifty shades of grey books are:\n\n1. "The Three Hundred Shades of Grey" by William Shakespeare\n'
        '2. "The Three Hundred Shades of Grey" by Charles Dickens\n'
        '3. "The Three Hundred Shades of Grey" by Oscar Wilde',
        'There are three fifty shades of grey books:\n\n1. "The Great Gatsby" by F. Scott Fitzgerald\n'
        '2. "To Kill a Mockingbird" by Harper Lee\n3. "The Catcher in the Rye" by J.D. Salinger',
    ),
    # two lists that each name a country the other does not
    (
        "What is germany's neighbouring countries?",
        "Germany borders Poland, Austria, Switzerland, and the Netherlands.",
        "The neighboring countries of Germany are Austria, Switzerland, France, and the Netherlands.",
    ),
]

SAME += [
    # a date and its month and year, or its year, are one answer
    (
        "Which date was facebook launched by mark zuckerberg?",
        "Facebook was launched on February 4, 2004.",
        "Facebook was launched in February 2004.",
    ),
    ("When did mark zuckerburg invent facebook?", "Facebook was launched on August 6, 2004.", "He started it in 2004."),
    # a year beside no year, where the question asks for none (its "first" is no number to compute with)
    (
        "What city and state did woodstock concert first appear?",
        "The popular Woodstock concert occurred in Woodstock, New York, in 1969.",
        "Woodstock is held in Woodstock, New York.",
    ),
    # a first sentence that restates the question but names no answer: the next one does
    (
        "What are president andrew jackson's parents name?",
        "Andrew Jackson's parents were John and Rachel Jackson.",
        "President Andrew Jackson had two parents. His father was John Jackson, a wealthy planter and politician, "
        "and his mother was Rachel Jackson, a widow who had been married to John Jackson for many years.",
    ),
    # a name joined by "of", made of the question's words ("gulf", "california"): one name all the same
    (
        "What gulf is between lower california and mexico?",
        "The Gulf of California is between Lower California and Mexico.",
        "The Gulf of California is the body of water between the lower California coast and Mexico.",
    ),
    # one enumeration in another order and other words around it
    (
        "Which countries were enemies of the us during ww2?",
        "The enemies of the United States were Germany, Italy, and Japan.",
        "Japan, Germany and Italy fought the United States in World War II.",
    ),
    # a list and the same list in other words
    (
        "What is germany's neighbouring countries?",
        "Germany's neighbors are Austria, Switzerland, and Luxembourg.",
        "The neighbouring countries of Germany are Austria, Switzerland and Luxembourg.",
    ),
]


# ComQA's second held-out set, labelled by hand (development from there: research/data/hearing_rest.md)
SAME += [
    # a "when" that does not open the question asks no number: a year beside none does not part two answers
    # (ComQA's third held-out set, development from there)
    (
        "Who became president when jfk was assassinated?",
        "The president who became president when John F. Kennedy was assassinated was Lyndon B. Johnson.",
        "When John F. Kennedy was assassinated in 1963, Lyndon B. Johnson became the president of the United States.",
    ),
    # a name of the question's words that no wording writes as that name, though one capitalises each word
    (
        "What is the name of the gulf between baja california and mexico? Which Gulf is between Baja California "
        "and Mexico?",
        "The Gulf between Baja California and Mexico is the Gulf of California.",
        "The Gulf of California is the body of water between Baja California and Mexico.",
    ),
    # a span of years inside a span of dates
    (
        "How long did fdr rule?",
        "Franklin D. Roosevelt ruled from 1933 to 1945.",
        "Franklin D. Roosevelt's presidency lasted from March 4, 1933, to January 20, 1945.",
    ),
    # long answers to a question whose "first" is no number: their last numbers are no worked results
    (
        "Who was the first american to enter outer space?",
        "The first American to enter outer space was Alan Shepard. He was a NASA astronaut who flew on the Apollo "
        "11 mission in 1969. Shepard was the first human to travel to space and was the first to walk on the moon.",
        "The first American to enter outer space was Alan Shepard. He was the first human to travel to space on "
        "April 12, 1961, aboard the Mercury 13 spacecraft. Shepard's mission was to test the spacecraft's systems "
        "and to demonstrate the feasibility of human spaceflight.",
    ),
    # one thing by two of its names in the alias table, where the question names it by none
    ("What religion observes ramadan?", "Islam observes Ramadan.", "Ramadan is observed by Muslims around the world."),
    # the question's verb in another form ("died" for "die") is no content
    (
        "What disease did edgar allan poe's mother die from?",
        "Edgar Allan Poe's mother died of tuberculosis.",
        "Edgar Allen Poe's mother, Sarah Edith Poe, had tuberculosis.",
    ),
    # the same dates in the other order: one side's first sentence agrees with the other's later one
    (
        "When did charles darwin die?",
        "Charles Darwin was born on February 12, 1809. He died on April 19, 1882, in Downe, England.",
        "Charles Darwin died on April 19, 1882, in Downe, England. He was born on February 12, 1809.",
    ),
    # a date the question does not ask for is a detail, as a year is
    (
        "What state was the first woodstock concert?",
        "The first Woodstock concert was held on August 15, 1969, in Woodstock, New York.",
        "Woodstock is located in New York State, United States.",
    ),
]
UNDECIDED += [
    ("What religion observes ramadan?", "Islam observes Ramadan.", "Ramadan is observed by Christians."),
    # first sentences that give two dates, later ones alike: background, not the answer
    (
        "When did charles darwin die and born?",
        "Charles Darwin died on April 19, 1882, in London. He was born on February 12, 1809, in Shrewsbury.",
        "Charles Darwin died on February 19, 1882, in London. He was born on February 12, 1809, in Shrewsbury.",
    ),
    # "what dates" asks for dates: the month is part of the answer, not an aside
    (
        "What dates was the planet jupiter discovered?",
        "Jupiter was discovered by Galileo Galilei on January 27, 1610.",
        "Jupiter was discovered by Galileo Galilei on January 5, 1610.",
    ),
    # a month asked for is the answer
    (
        "In which month was napoleon born?",
        "Napoleon was born on May 5, 1769, in Ajaccio.",
        "Napoleon was born on August 5, 1769, in Ajaccio.",
    ),
    # two spans that end alike
    (
        "What years did don meredith play for the dallas cowboys?",
        "Don Meredith played for the Dallas Cowboys from 1960 to 1964.",
        "Don Meredith played for the Dallas Cowboys from 1961 to 1964.",
    ),
    # the question's verb in another form ("ruled") is no answer the two share
    (
        "What lands did bernando de galvez rule in north america?",
        "Bernando de Galvez ruled in North America from 1555 to 1561.",
        "Bernando de Galvez ruled in North America from 1621 to 1644. He was the first European to establish a "
        "permanent settlement in North America.",
    ),
    # two enumerations that do not name the same things, one inside the other or not
    (
        "Which planets are smaller than earth?",
        "The planets smaller than the Earth are Mercury, Venus, and Earth itself.",
        "The three planets that are smaller than Earth are Mercury, Venus, and Mars.",
    ),
    (
        "Which countries were enemies of the us during ww2?",
        "During World War II, the enemies of the United States included Germany, Italy, and Japan.",
        "During World War II, the enemies of the United States included Germany, Italy, Japan, and Hungary.",
    ),
    # the list a sentence specifies ("including:") is what it names, not an aside to cut
    (
        "Which countries were occupied by germany during world war ii?",
        "During World War II, Germany occupied several countries, including:\n\n1. **France**: From 1940 to 1945."
        "\n2. **Belgium**: From 1940 to 1945.\n3. **Denmark**: From 1940 to 1945.",
        "During World War II, Germany occupied several countries, including:\n\n1. Poland (1939-1945)\n"
        "2. Czechoslovakia (1939-1945)\n3. Hungary (1944-1945)",
    ),
]


@pytest.mark.parametrize(("question", "a", "b"), SAME)
def test_answers_with_one_core_are_the_same(question: str, a: str, b: str) -> None:
    assert same_core(question, a, b) is True
    assert same_core(question, b, a) is True


@pytest.mark.parametrize(("question", "a", "b"), UNDECIDED)
def test_answers_whose_cores_differ_are_left_open(question: str, a: str, b: str) -> None:
    assert same_core(question, a, b) is None
    assert same_core(question, b, a) is None


def test_the_core_drops_the_question_and_the_framing() -> None:
    core = answer_core(FRANCE, "The capital city of France's nation is Paris.")
    assert core.names == {"paris"} and not core.numbers and not core.negated
    assert answer_core("What is 12 times 3?", "12 times 3 equals 36.").numbers == {36}


def test_yes_no_questions_are_recognised() -> None:
    assert is_yes_no_question("Is the Earth round?") and is_yes_no_question("does ice float?")
    assert not is_yes_no_question("What is the capital of France?")


async def test_in_the_default_local_chain_distinct_keeps_its_veto() -> None:
    chain = build_equivalence(
        ["exact", "numeric", "contains", "distinct", "core"], client=ModelClient(), judge_model="x"
    )
    question = "What is the capital of Australia?"
    same, by = await chain.decide(
        question, "The capital of Australia is Canberra.", "Australia's capital city is Canberra."
    )
    assert (same, by) == (True, "core")
    same, by = await chain.decide(
        question, "The capital of Australia is Canberra.", "The capital of Australia is Sydney."
    )
    assert (same, by) == (False, "distinct")
    same, by = await chain.decide(question, "Canberra is the capital.", "Canberra is not the capital; Sydney is.")
    assert (same, by) == (False, Equivalence.UNDECIDED)


PAIR_FILES = ["answer_pairs.jsonl", "answer_pairs_final2.jsonl", "answer_pairs_final3.jsonl"]


async def test_the_default_local_chain_merges_no_labelled_different_pair() -> None:
    """Every hand-labelled pair of real answers (research/data): no different pair merged, most same ones merged."""
    data = Path(__file__).parents[1] / "research" / "data"
    rows = [json.loads(line) for name in PAIR_FILES for line in (data / name).read_text().splitlines() if line]
    chain = build_equivalence(
        ["exact", "numeric", "contains", "distinct", "core"], client=ModelClient(), judge_model="x"
    )
    merged = {"same": 0, "different": 0}
    wrong = []
    for r in rows:
        same, by = await chain.decide(r["question"], r["a"], r["b"])
        if same and by != Equivalence.UNDECIDED:
            merged[r["label"]] += 1
            if r["label"] == "different":
                wrong.append((r["question"], r["a"], r["b"]))
    assert wrong == []
    # a floor under the measured 0.95 (research/equivalence.py), so a change that loses many merges fails
    assert merged["same"] / sum(r["label"] == "same" for r in rows) > 0.9
