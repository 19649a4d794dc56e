"""Write evaluation/data/sample.jsonl: the built-in sample set of selfpara.

Short factual and arithmetic questions, easy enough for a small model to get some
right, each with gold aliases and three written, meaning-preserving paraphrases
(variants 1..3) so that benchmarks need no paraphrase generation. The arithmetic and
unit-conversion golds are computed here, never typed. Deterministic: running it again
writes the same file.

    python scripts/make_sample.py            # rewrite sample.jsonl
    python scripts/make_sample.py --check    # fail if the file is out of date
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "sample.jsonl"
SEED = 20240611

NUMBER_WORDS = {
    0: "zero",
    1: "one",
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
    11: "eleven",
    12: "twelve",
    13: "thirteen",
    14: "fourteen",
    15: "fifteen",
    16: "sixteen",
    17: "seventeen",
    18: "eighteen",
    19: "nineteen",
    20: "twenty",
    24: "twenty-four",
    26: "twenty-six",
    32: "thirty-two",
    46: "forty-six",
    50: "fifty",
    52: "fifty-two",
    60: "sixty",
    64: "sixty-four",
    88: "eighty-eight",
    100: "one hundred",
    206: "two hundred and six",
    365: "three hundred and sixty-five",
    366: "three hundred and sixty-six",
}


def number_aliases(n: int) -> list[str]:
    """Gold aliases of a whole number: digits, with thousands separator, and in words where known."""
    out = [str(n)]
    if n >= 1000:
        out.append(f"{n:,}")
    if n in NUMBER_WORDS:
        out.append(NUMBER_WORDS[n])
        if "-" in NUMBER_WORDS[n]:
            out.append(NUMBER_WORDS[n].replace("-", " "))
    return out


# ----------------------------------------------------------------------------------------
# capitals: (country as it reads inside a sentence, capital aliases)

CAPITALS: list[tuple[str, list[str]]] = [
    ("France", ["Paris"]),
    ("Germany", ["Berlin"]),
    ("Italy", ["Rome"]),
    ("Spain", ["Madrid"]),
    ("Portugal", ["Lisbon"]),
    ("the United Kingdom", ["London"]),
    ("Ireland", ["Dublin"]),
    ("Belgium", ["Brussels"]),
    ("Austria", ["Vienna"]),
    ("Poland", ["Warsaw"]),
    ("the Czech Republic", ["Prague"]),
    ("Hungary", ["Budapest"]),
    ("Greece", ["Athens"]),
    ("Sweden", ["Stockholm"]),
    ("Norway", ["Oslo"]),
    ("Denmark", ["Copenhagen"]),
    ("Finland", ["Helsinki"]),
    ("Iceland", ["Reykjavik", "Reykjavík"]),
    ("Russia", ["Moscow"]),
    ("Ukraine", ["Kyiv", "Kiev"]),
    ("Romania", ["Bucharest"]),
    ("Bulgaria", ["Sofia"]),
    ("Serbia", ["Belgrade"]),
    ("Croatia", ["Zagreb"]),
    ("Estonia", ["Tallinn"]),
    ("Latvia", ["Riga"]),
    ("Lithuania", ["Vilnius"]),
    ("Slovakia", ["Bratislava"]),
    ("Japan", ["Tokyo"]),
    ("China", ["Beijing", "Peking"]),
    ("South Korea", ["Seoul"]),
    ("India", ["New Delhi"]),
    ("Thailand", ["Bangkok"]),
    ("Vietnam", ["Hanoi", "Ha Noi"]),
    ("the Philippines", ["Manila"]),
    ("Malaysia", ["Kuala Lumpur"]),
    ("Pakistan", ["Islamabad"]),
    ("Bangladesh", ["Dhaka"]),
    ("Nepal", ["Kathmandu"]),
    ("Afghanistan", ["Kabul"]),
    ("Iran", ["Tehran", "Teheran"]),
    ("Iraq", ["Baghdad"]),
    ("Saudi Arabia", ["Riyadh"]),
    ("Syria", ["Damascus"]),
    ("Jordan", ["Amman"]),
    ("Lebanon", ["Beirut"]),
    ("Qatar", ["Doha"]),
    ("Turkey", ["Ankara"]),
    ("Egypt", ["Cairo"]),
    ("Kenya", ["Nairobi"]),
    ("Ethiopia", ["Addis Ababa"]),
    ("Nigeria", ["Abuja"]),
    ("Ghana", ["Accra"]),
    ("Morocco", ["Rabat"]),
    ("Algeria", ["Algiers"]),
    ("Tunisia", ["Tunis"]),
    ("Senegal", ["Dakar"]),
    ("Uganda", ["Kampala"]),
    ("Zimbabwe", ["Harare"]),
    ("Canada", ["Ottawa"]),
    ("the United States", ["Washington, D.C.", "Washington DC", "Washington"]),
    ("Mexico", ["Mexico City"]),
    ("Cuba", ["Havana"]),
    ("Jamaica", ["Kingston"]),
    ("Argentina", ["Buenos Aires"]),
    ("Brazil", ["Brasília", "Brasilia"]),
    ("Chile", ["Santiago"]),
    ("Peru", ["Lima"]),
    ("Colombia", ["Bogotá", "Bogota"]),
    ("Venezuela", ["Caracas"]),
    ("Uruguay", ["Montevideo"]),
    ("Ecuador", ["Quito"]),
    ("Australia", ["Canberra"]),
    ("New Zealand", ["Wellington"]),
    ("Mongolia", ["Ulaanbaatar", "Ulan Bator"]),
    ("Cambodia", ["Phnom Penh"]),
]

CAPITAL_TEMPLATES = [
    "Which city is the capital of {c}?",
    "Name the capital city of {c}.",
    "What city serves as the capital of {c}?",
    "The capital of {c} is which city?",
    "Can you tell me the capital of {c}?",
    "What is {p} capital city?",
    "What is the name of the capital city of {c}?",
]


def capital_items() -> list[dict]:
    items = []
    for index, (country, capital) in enumerate(CAPITALS):
        pick = [CAPITAL_TEMPLATES[(index + j * 2) % len(CAPITAL_TEMPLATES)] for j in range(3)]
        possessive = country + ("'" if country.endswith("s") else "'s")
        variants = [f"What is the capital of {country}?"] + [t.format(c=country, p=possessive) for t in pick]
        items.append(_item("capitals", "factual", capital, variants))
    return items


# ----------------------------------------------------------------------------------------
# hand-written facts: (gold aliases, original, paraphrase 1, 2, 3)

GEOGRAPHY: list[tuple[list[str], str, str, str, str]] = [
    (
        ["Pacific Ocean", "Pacific"],
        "What is the largest ocean on Earth?",
        "Which ocean is the biggest on our planet?",
        "Name the largest of Earth's oceans.",
        "Of all the oceans on Earth, which one is the largest?",
    ),
    (
        ["Mount Everest", "Everest"],
        "What is the tallest mountain in the world?",
        "Which mountain on Earth is the highest above sea level?",
        "Name the world's highest mountain.",
        "What mountain has the greatest height above sea level in the world?",
    ),
    (
        ["Sahara", "Sahara Desert"],
        "What is the largest hot desert in the world?",
        "Which hot desert is the biggest on Earth?",
        "Name the world's largest hot desert.",
        "Of all hot deserts on Earth, which one covers the most area?",
    ),
    (
        ["Russia"],
        "What is the largest country in the world by area?",
        "Which country covers the most land area on Earth?",
        "Name the biggest country in the world by area.",
        "By land area, which nation is the largest in the world?",
    ),
    (
        ["Vatican City", "Vatican", "Holy See"],
        "What is the smallest country in the world by area?",
        "Which country has the smallest area in the world?",
        "Name the world's smallest country by area.",
        "By area, which nation is the tiniest on Earth?",
    ),
    (
        ["Asia"],
        "What is the largest continent by area?",
        "Which continent covers the most land area?",
        "Name the biggest continent on Earth.",
        "Of the seven continents, which one is the largest?",
    ),
    (
        ["Australia", "Oceania"],
        "What is the smallest continent by area?",
        "Which continent covers the least land area?",
        "Name the smallest of the seven continents.",
        "Of all the continents, which one is the smallest?",
    ),
    (
        ["Seine", "Seine River", "River Seine"],
        "Which river flows through Paris?",
        "What river runs through the city of Paris?",
        "Name the river that passes through Paris.",
        "Paris lies on the banks of which river?",
    ),
    (
        ["Thames", "River Thames", "Thames River"],
        "Which river flows through London?",
        "What river runs through the city of London?",
        "Name the river that passes through London.",
        "London lies on the banks of which river?",
    ),
    (
        ["Nile", "Nile River", "River Nile"],
        "Which river flows through Cairo?",
        "What river runs through the city of Cairo?",
        "Name the river that passes through Cairo.",
        "Cairo lies on the banks of which river?",
    ),
    (
        ["Danube", "Danube River", "River Danube"],
        "Which river flows through Budapest?",
        "What river runs through the city of Budapest?",
        "Name the river that passes through Budapest.",
        "Budapest lies on the banks of which river?",
    ),
    (
        ["Egypt"],
        "In which country are the pyramids of Giza?",
        "The pyramids of Giza are located in which country?",
        "Name the country where the Giza pyramids stand.",
        "Which country is home to the pyramids of Giza?",
    ),
    (
        ["France"],
        "In which country is the Eiffel Tower?",
        "The Eiffel Tower is located in which country?",
        "Name the country where the Eiffel Tower stands.",
        "Which country is home to the Eiffel Tower?",
    ),
    (
        ["India"],
        "In which country is the Taj Mahal?",
        "The Taj Mahal is located in which country?",
        "Name the country where the Taj Mahal stands.",
        "Which country is home to the Taj Mahal?",
    ),
    (
        ["Italy"],
        "In which country is the Colosseum?",
        "The Colosseum is located in which country?",
        "Name the country where the Colosseum stands.",
        "Which country is home to the Colosseum?",
    ),
    (
        ["Peru"],
        "In which country is Machu Picchu?",
        "Machu Picchu is located in which country?",
        "Name the country where Machu Picchu is found.",
        "Which country is home to Machu Picchu?",
    ),
    (
        ["China"],
        "In which country is the Great Wall?",
        "The Great Wall is located in which country?",
        "Name the country where the Great Wall was built.",
        "Which country is home to the Great Wall?",
    ),
    (
        ["New York City", "New York", "NYC"],
        "In which city is the Statue of Liberty?",
        "The Statue of Liberty stands in which city?",
        "Name the city where the Statue of Liberty is located.",
        "Which city is home to the Statue of Liberty?",
    ),
    (
        ["Tanzania"],
        "In which country is Mount Kilimanjaro?",
        "Mount Kilimanjaro is located in which country?",
        "Name the country where Mount Kilimanjaro stands.",
        "Which country is home to Mount Kilimanjaro?",
    ),
    (
        ["Greenland"],
        "What is the largest island in the world?",
        "Which island is the biggest on Earth?",
        "Name the world's largest island.",
        "Of all the islands in the world, which one is the largest?",
    ),
    (
        ["Indian Ocean", "Indian"],
        "Which ocean lies between Africa and Australia?",
        "What ocean separates Africa from Australia?",
        "Name the ocean between Africa and Australia.",
        "Between Africa and Australia lies which ocean?",
    ),
    (
        ["Mediterranean Sea", "Mediterranean"],
        "Which sea separates southern Europe from North Africa?",
        "What sea lies between southern Europe and North Africa?",
        "Name the sea between southern Europe and North Africa.",
        "Southern Europe and North Africa are separated by which sea?",
    ),
    (
        ["Portuguese"],
        "What is the official language of Brazil?",
        "Which language is the official language of Brazil?",
        "Name the official language of Brazil.",
        "In Brazil, what is the official language?",
    ),
    (
        ["Spanish"],
        "What is the official language of Argentina?",
        "Which language is the official language of Argentina?",
        "Name the official language of Argentina.",
        "In Argentina, what is the official language?",
    ),
    (
        ["yen", "Japanese yen"],
        "What is the currency of Japan?",
        "Which currency is used in Japan?",
        "Name the money used in Japan.",
        "In Japan, what currency do people pay with?",
    ),
    (
        ["euro"],
        "What currency is used in Germany?",
        "Which currency does Germany use?",
        "Name the money used in Germany today.",
        "In Germany, what currency do people pay with?",
    ),
    (
        ["pound", "pound sterling", "British pound", "sterling"],
        "What is the currency of the United Kingdom?",
        "Which currency is used in the United Kingdom?",
        "Name the money used in the United Kingdom.",
        "In the United Kingdom, what currency do people pay with?",
    ),
    (
        ["rupee", "Indian rupee"],
        "What is the currency of India?",
        "Which currency is used in India?",
        "Name the money used in India.",
        "In India, what currency do people pay with?",
    ),
    (
        ["Australia"],
        "Which country is the kangaroo native to?",
        "Kangaroos are native to which country?",
        "Name the country where kangaroos live in the wild.",
        "In which country do kangaroos naturally live?",
    ),
    (
        ["Volga", "Volga River"],
        "What is the longest river in Europe?",
        "Which river in Europe is the longest?",
        "Name the longest river in Europe.",
        "Of all the rivers in Europe, which one is the longest?",
    ),
    (
        ["Africa"],
        "On which continent is Kenya?",
        "Kenya is located on which continent?",
        "Name the continent where Kenya lies.",
        "Which continent is Kenya part of?",
    ),
    (
        ["South America"],
        "On which continent is Brazil?",
        "Brazil is located on which continent?",
        "Name the continent where Brazil lies.",
        "Which continent is Brazil part of?",
    ),
    (
        ["Asia"],
        "On which continent is Japan?",
        "Japan is located on which continent?",
        "Name the continent where Japan lies.",
        "Which continent is Japan part of?",
    ),
    (
        ["Europe"],
        "On which continent is Poland?",
        "Poland is located on which continent?",
        "Name the continent where Poland lies.",
        "Which continent is Poland part of?",
    ),
    (
        ["North America"],
        "On which continent is Canada?",
        "Canada is located on which continent?",
        "Name the continent where Canada lies.",
        "Which continent is Canada part of?",
    ),
    (
        ["Africa"],
        "On which continent is Nigeria?",
        "Nigeria is located on which continent?",
        "Name the continent where Nigeria lies.",
        "Which continent is Nigeria part of?",
    ),
    (
        ["South America"],
        "On which continent is Chile?",
        "Chile is located on which continent?",
        "Name the continent where Chile lies.",
        "Which continent is Chile part of?",
    ),
    (
        ["Asia"],
        "On which continent is Vietnam?",
        "Vietnam is located on which continent?",
        "Name the continent where Vietnam lies.",
        "Which continent is Vietnam part of?",
    ),
    (
        ["Europe"],
        "On which continent is Norway?",
        "Norway is located on which continent?",
        "Name the continent where Norway lies.",
        "Which continent is Norway part of?",
    ),
    (
        ["Antarctica"],
        "Which continent is covered almost entirely by ice?",
        "What continent is almost completely covered in ice?",
        "Name the continent that is nearly all ice.",
        "Almost all of which continent lies under ice?",
    ),
]

SCIENCE: list[tuple[list[str], str, str, str, str]] = [
    (
        ["Au"],
        "What is the chemical symbol for gold?",
        "Which chemical symbol stands for gold?",
        "Give the chemical symbol of gold.",
        "Gold is written with which chemical symbol?",
    ),
    (
        ["Ag"],
        "What is the chemical symbol for silver?",
        "Which chemical symbol stands for silver?",
        "Give the chemical symbol of silver.",
        "Silver is written with which chemical symbol?",
    ),
    (
        ["Fe"],
        "What is the chemical symbol for iron?",
        "Which chemical symbol stands for iron?",
        "Give the chemical symbol of iron.",
        "Iron is written with which chemical symbol?",
    ),
    (
        ["Na"],
        "What is the chemical symbol for sodium?",
        "Which chemical symbol stands for sodium?",
        "Give the chemical symbol of sodium.",
        "Sodium is written with which chemical symbol?",
    ),
    (
        ["Cu"],
        "What is the chemical symbol for copper?",
        "Which chemical symbol stands for copper?",
        "Give the chemical symbol of copper.",
        "Copper is written with which chemical symbol?",
    ),
    (
        ["Pb"],
        "What is the chemical symbol for lead?",
        "Which chemical symbol stands for lead?",
        "Give the chemical symbol of lead.",
        "Lead is written with which chemical symbol?",
    ),
    (
        ["Zn"],
        "What is the chemical symbol for zinc?",
        "Which chemical symbol stands for zinc?",
        "Give the chemical symbol of zinc.",
        "Zinc is written with which chemical symbol?",
    ),
    (
        ["Hg"],
        "What is the chemical symbol for mercury?",
        "Which chemical symbol stands for mercury?",
        "Give the chemical symbol of mercury.",
        "Mercury, the element, is written with which chemical symbol?",
    ),
    (
        ["Mars"],
        "Which planet is known as the Red Planet?",
        "What planet is called the Red Planet?",
        "Name the planet nicknamed the Red Planet.",
        "The Red Planet is the nickname of which planet?",
    ),
    (
        ["Jupiter"],
        "What is the largest planet in our solar system?",
        "Which planet in our solar system is the biggest?",
        "Name the largest planet of the solar system.",
        "Of all the planets in our solar system, which one is the largest?",
    ),
    (
        ["Mercury"],
        "Which planet is closest to the Sun?",
        "What planet orbits nearest to the Sun?",
        "Name the planet closest to the Sun.",
        "Of all the planets, which one is nearest the Sun?",
    ),
    (
        ["Venus"],
        "What is the hottest planet in our solar system?",
        "Which planet in our solar system has the highest surface temperature?",
        "Name the hottest planet of the solar system.",
        "Of all the planets in our solar system, which one is the hottest?",
    ),
    (
        ["Saturn"],
        "Which planet is famous for its large, bright rings?",
        "What planet is best known for its big, bright rings?",
        "Name the planet famous for its bright rings.",
        "The large, bright rings are the best-known feature of which planet?",
    ),
    (
        ["carbon dioxide", "CO2"],
        "Which gas do plants take in from the air for photosynthesis?",
        "What gas do plants absorb from the air to carry out photosynthesis?",
        "Name the gas plants take from the air for photosynthesis.",
        "For photosynthesis, plants absorb which gas from the air?",
    ),
    (
        ["oxygen", "O2"],
        "Which gas do plants release during photosynthesis?",
        "What gas do plants give off when they photosynthesize?",
        "Name the gas plants release in photosynthesis.",
        "During photosynthesis, plants release which gas?",
    ),
    (
        ["H2O"],
        "What is the chemical formula of water?",
        "Which chemical formula describes water?",
        "Give the chemical formula for water.",
        "Water has which chemical formula?",
    ),
    (
        ["100", "one hundred"],
        "At what temperature in degrees Celsius does water boil at sea level?",
        "What is the boiling point of water at sea level in degrees Celsius?",
        "In degrees Celsius, at what temperature does water boil at sea level?",
        "At sea level, water boils at how many degrees Celsius?",
    ),
    (
        ["0", "zero"],
        "At what temperature in degrees Celsius does water freeze?",
        "What is the freezing point of water in degrees Celsius?",
        "In degrees Celsius, at what temperature does water freeze?",
        "Water freezes at how many degrees Celsius?",
    ),
    (
        ["diamond", "diamonds"],
        "What is the hardest natural substance?",
        "Which natural material is the hardest?",
        "Name the hardest substance found in nature.",
        "Of all natural substances, which one is the hardest?",
    ),
    (
        ["heart"],
        "Which organ pumps blood through the human body?",
        "What organ pumps blood around the human body?",
        "Name the organ that pumps blood through the body.",
        "In the human body, which organ pumps the blood?",
    ),
    (
        ["skin"],
        "What is the largest organ of the human body?",
        "Which organ of the human body is the biggest?",
        "Name the largest organ in the human body.",
        "Of all human organs, which one is the largest?",
    ),
    (
        ["lungs", "lung"],
        "Which organs do humans use to breathe?",
        "What organs let humans breathe?",
        "Name the organs humans breathe with.",
        "Humans breathe with which organs?",
    ),
    (
        ["red blood cells", "red blood cell", "erythrocytes"],
        "Which blood cells carry oxygen around the body?",
        "What type of blood cell carries oxygen through the body?",
        "Name the blood cells that transport oxygen around the body.",
        "Oxygen is carried around the body by which blood cells?",
    ),
    (
        ["gravity", "gravitation"],
        "What force pulls objects toward the Earth?",
        "Which force makes objects fall toward the Earth?",
        "Name the force that pulls things toward the Earth.",
        "Objects are pulled toward the Earth by which force?",
    ),
    (
        ["nucleus"],
        "What is the center of an atom called?",
        "What do we call the center of an atom?",
        "Name the central part of an atom.",
        "The center of an atom is known as what?",
    ),
    (
        ["electron", "electrons"],
        "Which particle in an atom has a negative charge?",
        "What particle of an atom carries a negative charge?",
        "Name the negatively charged particle in an atom.",
        "In an atom, which particle is negatively charged?",
    ),
    (
        ["mitochondria", "mitochondrion"],
        "Which part of the cell is known as the powerhouse of the cell?",
        "What part of a cell is called the powerhouse of the cell?",
        "Name the cell part nicknamed the powerhouse of the cell.",
        "The powerhouse of the cell is which part of the cell?",
    ),
    (
        ["Sun", "the Sun", "Sol"],
        "What is the closest star to the Earth?",
        "Which star is nearest to the Earth?",
        "Name the star closest to the Earth.",
        "Of all the stars, which one is nearest to the Earth?",
    ),
    (
        ["Moon", "the Moon"],
        "What is the natural satellite of the Earth called?",
        "What is the name of the Earth's natural satellite?",
        "Name the natural satellite that orbits the Earth.",
        "The Earth's natural satellite is called what?",
    ),
    (
        ["vitamin D"],
        "Which vitamin does the skin make when exposed to sunlight?",
        "What vitamin does human skin produce in sunlight?",
        "Name the vitamin the skin makes in sunlight.",
        "When skin is exposed to sunlight, which vitamin does it make?",
    ),
    (
        ["nitrogen", "N2"],
        "Which gas makes up most of the Earth's atmosphere?",
        "What gas is the main part of the Earth's atmosphere?",
        "Name the most common gas in Earth's atmosphere.",
        "Most of the Earth's atmosphere is made of which gas?",
    ),
    (
        ["honey"],
        "What sweet food do honeybees make?",
        "Which sweet food is made by honeybees?",
        "Name the sweet food that honeybees produce.",
        "Honeybees produce which sweet food?",
    ),
    (
        ["mammal", "mammals"],
        "What type of animal is a whale?",
        "A whale belongs to which class of animals?",
        "Name the class of animals that whales belong to.",
        "Whales are classified as what kind of animal?",
    ),
    (
        ["blue whale"],
        "What is the largest animal on Earth?",
        "Which animal is the biggest on our planet?",
        "Name the largest animal living on Earth.",
        "Of all animals on Earth, which one is the largest?",
    ),
    (
        ["cheetah"],
        "What is the fastest land animal?",
        "Which animal is the fastest on land?",
        "Name the fastest animal that lives on land.",
        "Of all land animals, which one can run the fastest?",
    ),
    (
        ["giraffe"],
        "What is the tallest animal in the world?",
        "Which animal is the tallest on Earth?",
        "Name the world's tallest animal.",
        "Of all animals, which one is the tallest?",
    ),
    (
        ["tadpole", "tadpoles"],
        "What is a young frog called?",
        "What do we call a baby frog?",
        "Name the young stage of a frog.",
        "A young frog is known as what?",
    ),
    (
        ["photosynthesis"],
        "What process do plants use to make food from sunlight?",
        "By what process do plants turn sunlight into food?",
        "Name the process plants use to make food from sunlight.",
        "Plants make food from sunlight through which process?",
    ),
    (
        ["evaporation"],
        "What is the process called when liquid water turns into vapor?",
        "What do we call the change of liquid water into water vapor?",
        "Name the process in which liquid water becomes vapor.",
        "When liquid water turns into vapor, what is the process called?",
    ),
    (
        ["Celsius", "centigrade"],
        "Which temperature scale sets the freezing point of water at 0 degrees?",
        "On which temperature scale does water freeze at 0 degrees?",
        "Name the temperature scale where water freezes at 0 degrees.",
        "Water freezes at 0 degrees on which temperature scale?",
    ),
]

HISTORY: list[tuple[list[str], str, str, str, str]] = [
    (
        ["1945"],
        "In what year did World War II end?",
        "What year did the Second World War end?",
        "World War II came to an end in which year?",
        "Which year marked the end of the Second World War?",
    ),
    (
        ["1939"],
        "In what year did World War II begin?",
        "What year did the Second World War start?",
        "World War II broke out in which year?",
        "Which year marked the start of the Second World War?",
    ),
    (
        ["1914"],
        "In what year did World War I begin?",
        "What year did the First World War start?",
        "World War I broke out in which year?",
        "Which year marked the start of the First World War?",
    ),
    (
        ["1918"],
        "In what year did World War I end?",
        "What year did the First World War end?",
        "World War I came to an end in which year?",
        "Which year marked the end of the First World War?",
    ),
    (
        ["1492"],
        "In what year did Christopher Columbus first reach the Americas?",
        "What year did Columbus first arrive in the Americas?",
        "Columbus first reached the Americas in which year?",
        "Which year did Christopher Columbus make his first landing in the Americas?",
    ),
    (
        ["1776"],
        "In what year was the United States Declaration of Independence signed?",
        "What year was the American Declaration of Independence signed?",
        "The United States Declaration of Independence was signed in which year?",
        "Which year saw the signing of the Declaration of Independence of the United States?",
    ),
    (
        ["1989"],
        "In what year did the Berlin Wall fall?",
        "What year did the Berlin Wall come down?",
        "The Berlin Wall fell in which year?",
        "Which year saw the fall of the Berlin Wall?",
    ),
    (
        ["1969"],
        "In what year did humans first land on the Moon?",
        "What year did people first set foot on the Moon?",
        "The first crewed Moon landing happened in which year?",
        "Which year saw the first humans land on the Moon?",
    ),
    (
        ["1789"],
        "In what year did the French Revolution begin?",
        "What year did the French Revolution start?",
        "The French Revolution broke out in which year?",
        "Which year marked the beginning of the French Revolution?",
    ),
    (
        ["1912"],
        "In what year did the Titanic sink?",
        "What year did the RMS Titanic go down?",
        "The Titanic sank in which year?",
        "Which year saw the sinking of the Titanic?",
    ),
    (
        ["1066"],
        "In what year was the Battle of Hastings fought?",
        "What year did the Battle of Hastings take place?",
        "The Battle of Hastings was fought in which year?",
        "Which year saw the Battle of Hastings?",
    ),
    (
        ["1215"],
        "In what year was the Magna Carta sealed?",
        "What year was the Magna Carta agreed to by King John?",
        "The Magna Carta was sealed in which year?",
        "Which year saw King John seal the Magna Carta?",
    ),
    (
        ["1991"],
        "In what year did the Soviet Union dissolve?",
        "What year did the Soviet Union break up?",
        "The Soviet Union was dissolved in which year?",
        "Which year saw the end of the Soviet Union?",
    ),
    (
        ["1815"],
        "In what year was the Battle of Waterloo fought?",
        "What year did the Battle of Waterloo take place?",
        "The Battle of Waterloo was fought in which year?",
        "Which year saw Napoleon defeated at Waterloo?",
    ),
    (
        ["1865"],
        "In what year did the American Civil War end?",
        "What year did the US Civil War come to an end?",
        "The American Civil War ended in which year?",
        "Which year marked the end of the American Civil War?",
    ),
    (
        ["1903"],
        "In what year did the Wright brothers make their first powered flight?",
        "What year did the Wright brothers first fly a powered airplane?",
        "The Wright brothers' first powered flight took place in which year?",
        "Which year saw the first powered flight by the Wright brothers?",
    ),
    (
        ["1957"],
        "In what year was Sputnik 1 launched?",
        "What year did the Soviet Union launch Sputnik 1?",
        "Sputnik 1 was launched in which year?",
        "Which year saw the launch of the satellite Sputnik 1?",
    ),
    (
        ["1961"],
        "In what year did Yuri Gagarin become the first person in space?",
        "What year did Yuri Gagarin fly into space as the first human?",
        "Yuri Gagarin became the first human in space in which year?",
        "Which year saw Yuri Gagarin become the first person to travel to space?",
    ),
    (
        ["1947"],
        "In what year did India gain independence from Britain?",
        "What year did India become independent from British rule?",
        "India won its independence from Britain in which year?",
        "Which year saw India become independent of Britain?",
    ),
    (
        ["1666"],
        "In what year did the Great Fire of London happen?",
        "What year did the Great Fire of London take place?",
        "The Great Fire of London broke out in which year?",
        "Which year saw the Great Fire of London?",
    ),
    (
        ["1453"],
        "In what year did Constantinople fall to the Ottomans?",
        "What year did the Ottomans capture Constantinople?",
        "Constantinople fell to the Ottoman Turks in which year?",
        "Which year saw the fall of Constantinople to the Ottomans?",
    ),
    (
        ["1917"],
        "In what year did the Russian Revolution take place?",
        "What year did the Russian Revolution happen?",
        "The Russian Revolution took place in which year?",
        "Which year saw the Russian Revolution?",
    ),
    (
        ["1929"],
        "In what year did the Wall Street Crash happen?",
        "What year did the Wall Street stock market crash take place?",
        "The Wall Street Crash happened in which year?",
        "Which year saw the great Wall Street stock market crash?",
    ),
    (
        ["1990"],
        "In what year were East and West Germany reunified?",
        "What year did East Germany and West Germany reunite?",
        "Germany was reunified in which year?",
        "Which year saw the reunification of East and West Germany?",
    ),
    (
        ["1994"],
        "In what year did Nelson Mandela become President of South Africa?",
        "What year was Nelson Mandela elected President of South Africa?",
        "Nelson Mandela became South Africa's president in which year?",
        "Which year saw Nelson Mandela take office as President of South Africa?",
    ),
]

PEOPLE: list[tuple[list[str], str, str, str, str]] = [
    (
        ["George Washington", "Washington"],
        "Who was the first President of the United States?",
        "Who served as the first US President?",
        "Name the first President of the United States.",
        "The first President of the United States was who?",
    ),
    (
        ["Leonardo da Vinci", "da Vinci", "Leonardo"],
        "Who painted the Mona Lisa?",
        "Which artist painted the Mona Lisa?",
        "Name the painter of the Mona Lisa.",
        "The Mona Lisa was painted by whom?",
    ),
    (
        ["William Shakespeare", "Shakespeare"],
        "Who wrote Romeo and Juliet?",
        "Which writer wrote the play Romeo and Juliet?",
        "Name the author of Romeo and Juliet.",
        "Romeo and Juliet was written by whom?",
    ),
    (
        ["William Shakespeare", "Shakespeare"],
        "Who wrote Hamlet?",
        "Which writer wrote the play Hamlet?",
        "Name the author of Hamlet.",
        "Hamlet was written by whom?",
    ),
    (
        ["Albert Einstein", "Einstein"],
        "Who developed the theory of relativity?",
        "Which scientist came up with the theory of relativity?",
        "Name the scientist behind the theory of relativity.",
        "The theory of relativity was developed by whom?",
    ),
    (
        ["Alexander Fleming", "Fleming"],
        "Who discovered penicillin?",
        "Which scientist discovered penicillin?",
        "Name the discoverer of penicillin.",
        "Penicillin was discovered by whom?",
    ),
    (
        ["Neil Armstrong", "Armstrong"],
        "Who was the first person to walk on the Moon?",
        "Who first set foot on the Moon?",
        "Name the first human to walk on the Moon.",
        "The first person to walk on the Moon was who?",
    ),
    (
        ["Jane Austen", "Austen"],
        "Who wrote Pride and Prejudice?",
        "Which author wrote the novel Pride and Prejudice?",
        "Name the author of Pride and Prejudice.",
        "Pride and Prejudice was written by whom?",
    ),
    (
        ["Vincent van Gogh", "van Gogh"],
        "Who painted The Starry Night?",
        "Which artist painted The Starry Night?",
        "Name the painter of The Starry Night.",
        "The Starry Night was painted by whom?",
    ),
    (
        ["Charles Darwin", "Darwin"],
        "Who proposed the theory of evolution by natural selection?",
        "Which scientist put forward the theory of evolution by natural selection?",
        "Name the scientist who proposed evolution by natural selection.",
        "The theory of evolution by natural selection was proposed by whom?",
    ),
    (
        ["George Orwell", "Orwell", "Eric Arthur Blair"],
        "Who wrote the novel 1984?",
        "Which author wrote the book 1984?",
        "Name the author of the novel 1984.",
        "The novel 1984 was written by whom?",
    ),
    (
        ["Miguel de Cervantes", "Cervantes"],
        "Who wrote Don Quixote?",
        "Which author wrote the novel Don Quixote?",
        "Name the author of Don Quixote.",
        "Don Quixote was written by whom?",
    ),
    (
        ["Isaac Newton", "Newton"],
        "Who formulated the three laws of motion?",
        "Which scientist stated the three laws of motion?",
        "Name the scientist known for the three laws of motion.",
        "The three laws of motion were formulated by whom?",
    ),
    (
        ["Marie Curie", "Curie", "Marie Sklodowska-Curie"],
        "Who was the first woman to win a Nobel Prize?",
        "Which woman was the first to receive a Nobel Prize?",
        "Name the first woman awarded a Nobel Prize.",
        "The first woman to win a Nobel Prize was who?",
    ),
    (
        ["Homer"],
        "Who is traditionally credited as the author of the Odyssey?",
        "Which ancient poet is traditionally said to have written the Odyssey?",
        "Name the poet traditionally credited with the Odyssey.",
        "Tradition credits the Odyssey to which poet?",
    ),
    (
        ["Michelangelo"],
        "Who painted the ceiling of the Sistine Chapel?",
        "Which artist painted the Sistine Chapel ceiling?",
        "Name the painter of the Sistine Chapel ceiling.",
        "The ceiling of the Sistine Chapel was painted by whom?",
    ),
    (
        ["J. K. Rowling", "J.K. Rowling", "Rowling"],
        "Who wrote the Harry Potter books?",
        "Which author wrote the Harry Potter series?",
        "Name the author of the Harry Potter books.",
        "The Harry Potter books were written by whom?",
    ),
    (
        ["Leo Tolstoy", "Tolstoy"],
        "Who wrote War and Peace?",
        "Which author wrote the novel War and Peace?",
        "Name the author of War and Peace.",
        "War and Peace was written by whom?",
    ),
    (
        ["Winston Churchill", "Churchill"],
        "Who was the British Prime Minister for most of World War II?",
        "Which Prime Minister led Britain through most of the Second World War?",
        "Name the British Prime Minister during most of World War II.",
        "For most of World War II, who was Prime Minister of the United Kingdom?",
    ),
    (
        ["Wolfgang Amadeus Mozart", "Mozart"],
        "Who composed the opera The Magic Flute?",
        "Which composer wrote the opera The Magic Flute?",
        "Name the composer of The Magic Flute.",
        "The opera The Magic Flute was composed by whom?",
    ),
    (
        ["Ludwig van Beethoven", "Beethoven"],
        "Who composed the Moonlight Sonata?",
        "Which composer wrote the Moonlight Sonata?",
        "Name the composer of the Moonlight Sonata.",
        "The Moonlight Sonata was composed by whom?",
    ),
    (
        ["Yuri Gagarin", "Gagarin"],
        "Who was the first person to travel into space?",
        "Who was the first human to go to space?",
        "Name the first person to fly into space.",
        "The first human to travel into space was who?",
    ),
]

# (number, original, paraphrase 1, 2, 3): gold aliases come from number_aliases
COUNTS: list[tuple[int, str, str, str, str]] = [
    (
        8,
        "How many legs does a spider have?",
        "A spider has how many legs?",
        "What is the number of legs on a spider?",
        "Count the legs of a spider: how many are there?",
    ),
    (
        6,
        "How many legs does an insect have?",
        "An insect has how many legs?",
        "What is the number of legs on an insect?",
        "Count the legs of an insect: how many are there?",
    ),
    (
        7,
        "How many days are in a week?",
        "A week has how many days?",
        "What is the number of days in one week?",
        "Count the days of a week: how many are there?",
    ),
    (
        12,
        "How many months are in a year?",
        "A year has how many months?",
        "What is the number of months in one year?",
        "Count the months of a year: how many are there?",
    ),
    (
        24,
        "How many hours are in a day?",
        "A day has how many hours?",
        "What is the number of hours in one day?",
        "Count the hours of a day: how many are there?",
    ),
    (
        60,
        "How many minutes are in an hour?",
        "An hour has how many minutes?",
        "What is the number of minutes in one hour?",
        "Count the minutes of an hour: how many are there?",
    ),
    (
        365,
        "How many days are in a year that is not a leap year?",
        "A non-leap year has how many days?",
        "What is the number of days in an ordinary, non-leap year?",
        "Count the days of a common year that is not a leap year: how many are there?",
    ),
    (
        366,
        "How many days are in a leap year?",
        "A leap year has how many days?",
        "What is the number of days in one leap year?",
        "Count the days of a leap year: how many are there?",
    ),
    (
        7,
        "How many continents are there on Earth?",
        "Earth has how many continents?",
        "What is the number of continents on Earth?",
        "Count the continents of the world: how many are there?",
    ),
    (
        8,
        "How many planets are in our solar system?",
        "Our solar system has how many planets?",
        "What is the number of planets in the solar system?",
        "Count the planets that orbit our Sun: how many are there?",
    ),
    (
        6,
        "How many sides does a hexagon have?",
        "A hexagon has how many sides?",
        "What is the number of sides of a hexagon?",
        "Count the sides of a hexagon: how many are there?",
    ),
    (
        8,
        "How many sides does an octagon have?",
        "An octagon has how many sides?",
        "What is the number of sides of an octagon?",
        "Count the sides of an octagon: how many are there?",
    ),
    (
        5,
        "How many sides does a pentagon have?",
        "A pentagon has how many sides?",
        "What is the number of sides of a pentagon?",
        "Count the sides of a pentagon: how many are there?",
    ),
    (
        3,
        "How many sides does a triangle have?",
        "A triangle has how many sides?",
        "What is the number of sides of a triangle?",
        "Count the sides of a triangle: how many are there?",
    ),
    (
        11,
        "How many players does a soccer team have on the field?",
        "A soccer team has how many players on the field at once?",
        "What is the number of players a soccer team fields at one time?",
        "Count the players of one soccer team on the pitch: how many are there?",
    ),
    (
        5,
        "How many players does a basketball team have on the court?",
        "A basketball team has how many players on the court at once?",
        "What is the number of players a basketball team has on the court at one time?",
        "Count the players of one basketball team on the court: how many are there?",
    ),
    (
        6,
        "How many strings does a standard guitar have?",
        "A standard guitar has how many strings?",
        "What is the number of strings on a standard guitar?",
        "Count the strings of a standard guitar: how many are there?",
    ),
    (
        88,
        "How many keys does a standard piano have?",
        "A standard piano has how many keys?",
        "What is the number of keys on a standard piano?",
        "Count the keys of a standard piano: how many are there?",
    ),
    (
        206,
        "How many bones are in the adult human body?",
        "The adult human body has how many bones?",
        "What is the number of bones in an adult human?",
        "Count the bones of an adult human skeleton: how many are there?",
    ),
    (
        32,
        "How many teeth does an adult human normally have?",
        "An adult human normally has how many teeth?",
        "What is the normal number of teeth in an adult human?",
        "Count the teeth of a typical adult human: how many are there?",
    ),
    (
        46,
        "How many chromosomes do human body cells normally have?",
        "Human body cells normally contain how many chromosomes?",
        "What is the normal number of chromosomes in a human body cell?",
        "Count the chromosomes in a typical human body cell: how many are there?",
    ),
    (
        3,
        "How many hearts does an octopus have?",
        "An octopus has how many hearts?",
        "What is the number of hearts in an octopus?",
        "Count the hearts of an octopus: how many are there?",
    ),
    (
        52,
        "How many cards are in a standard deck without jokers?",
        "A standard deck of cards without jokers has how many cards?",
        "What is the number of cards in a standard deck, not counting jokers?",
        "Count the cards of a standard deck with no jokers: how many are there?",
    ),
    (
        100,
        "How many years are in a century?",
        "A century has how many years?",
        "What is the number of years in one century?",
        "Count the years of a century: how many are there?",
    ),
    (
        10,
        "How many years are in a decade?",
        "A decade has how many years?",
        "What is the number of years in one decade?",
        "Count the years of a decade: how many are there?",
    ),
    (
        26,
        "How many letters are in the English alphabet?",
        "The English alphabet has how many letters?",
        "What is the number of letters in the English alphabet?",
        "Count the letters of the English alphabet: how many are there?",
    ),
    (
        50,
        "How many states are in the United States?",
        "The United States has how many states?",
        "What is the number of states in the USA?",
        "Count the states of the United States: how many are there?",
    ),
    (
        7,
        "How many colors are traditionally listed in a rainbow?",
        "A rainbow is traditionally said to have how many colors?",
        "What is the traditional number of colors in a rainbow?",
        "Count the colors of a rainbow as traditionally listed: how many are there?",
    ),
    (
        64,
        "How many squares are on a chessboard?",
        "A chessboard has how many squares?",
        "What is the number of squares on a chessboard?",
        "Count the squares of a chessboard: how many are there?",
    ),
    (
        16,
        "How many pieces does each player have at the start of a chess game?",
        "At the start of a chess game, each player has how many pieces?",
        "What is the number of pieces each chess player starts with?",
        "Count one player's pieces at the start of a chess game: how many are there?",
    ),
    (
        6,
        "How many faces does a cube have?",
        "A cube has how many faces?",
        "What is the number of faces of a cube?",
        "Count the faces of a cube: how many are there?",
    ),
    (
        3,
        "How many wheels does a tricycle have?",
        "A tricycle has how many wheels?",
        "What is the number of wheels on a tricycle?",
        "Count the wheels of a tricycle: how many are there?",
    ),
]


# ----------------------------------------------------------------------------------------
# arithmetic and unit conversions: numbers drawn here, golds computed here

OPERATIONS = {
    "plus": (
        lambda a, b: a + b,
        [
            "What is {a} plus {b}?",
            "What do you get when you add {a} and {b}?",
            "Compute the sum of {a} and {b}.",
            "If you add {b} to {a}, what number do you get?",
            "How much is {a} + {b}?",
            "Add {a} and {b}. What is the total?",
        ],
    ),
    "minus": (
        lambda a, b: a - b,
        [
            "What is {a} minus {b}?",
            "Subtract {b} from {a}. What is the result?",
            "What do you get if you take {b} away from {a}?",
            "How much is {a} - {b}?",
            "If you subtract {b} from {a}, what number is left?",
            "What is the difference when {b} is subtracted from {a}?",
        ],
    ),
    "times": (
        lambda a, b: a * b,
        [
            "What is {a} times {b}?",
            "Multiply {a} by {b}. What do you get?",
            "What is the product of {a} and {b}?",
            "How much is {a} multiplied by {b}?",
            "How much is {a} x {b}?",
            "If you multiply {a} by {b}, what number do you get?",
        ],
    ),
    "divided": (
        lambda a, b: a // b,
        [
            "What is {a} divided by {b}?",
            "Divide {a} by {b}. What is the result?",
            "How many times does {b} go into {a}?",
            "What do you get when you divide {a} by {b}?",
            "How much is {a} / {b}?",
            "If you split {a} into {b} equal parts, how big is each part?",
        ],
    ),
}

WORD_PROBLEMS = [
    (
        "plus",
        lambda a, b, c: a + b,
        [
            "Sam has {a} apples. He buys {b} more apples. How many apples does Sam have now?",
            "Sam starts with {a} apples and then buys another {b}. How many apples does he have in total?",
            "If Sam had {a} apples and bought {b} more, how many apples would he have?",
            "After buying {b} more apples, how many apples does Sam have if he started with {a}?",
        ],
    ),
    (
        "minus",
        lambda a, b, c: a - b,
        [
            "Maria had {a} dollars and spent {b} dollars on lunch. How many dollars does she have left?",
            "After spending {b} dollars on lunch, how many dollars does Maria have left if she started with {a}?",
            "Maria starts with {a} dollars and pays {b} dollars for lunch. How much money, in dollars, remains?",
            "If Maria had {a} dollars and used {b} of them to buy lunch, how many dollars would she still have?",
        ],
    ),
    (
        "times",
        lambda a, b, c: a * b,
        [
            "A box holds {a} pencils. How many pencils are in {b} boxes?",
            "If each box contains {a} pencils, how many pencils do {b} boxes contain?",
            "There are {a} pencils in every box. How many pencils are there in {b} such boxes?",
            "How many pencils are there altogether in {b} boxes with {a} pencils each?",
        ],
    ),
    (
        "divided",
        lambda a, b, c: a // b,
        [
            "{a} cookies are shared equally among {b} children. How many cookies does each child get?",
            "If {b} children share {a} cookies equally, how many cookies does each child receive?",
            "How many cookies does each child get when {a} cookies are split evenly between {b} children?",
            "There are {a} cookies to divide equally among {b} kids. How many cookies will each kid get?",
        ],
    ),
    (
        "times",
        lambda a, b, c: a * b,
        [
            "A train travels {a} kilometers every hour. How many kilometers does it travel in {b} hours?",
            "If a train covers {a} kilometers per hour, how far does it go in {b} hours, in kilometers?",
            "How many kilometers does a train going {a} kilometers an hour cover in {b} hours?",
            "A train moves at {a} kilometers per hour for {b} hours. What distance, in kilometers, does it cover?",
        ],
    ),
    (
        "minus",
        lambda a, b, c: a - b,
        [
            "There are {a} students in a class and {b} of them are girls. How many boys are in the class?",
            "A class has {a} students, {b} of whom are girls. How many of the students are boys?",
            "If {b} of the {a} students in a class are girls, how many boys are there?",
            "How many boys are in a class of {a} students when {b} of the students are girls?",
        ],
    ),
    (
        "plus",
        lambda a, b, c: a + b,
        [
            "A farmer has {a} cows and {b} sheep. How many animals does the farmer have in total?",
            "How many animals does a farmer own if he has {a} cows and {b} sheep?",
            "If a farmer keeps {a} cows and {b} sheep, what is the total number of his animals?",
            "A farmer owns {b} sheep and {a} cows. How many animals is that altogether?",
        ],
    ),
    (
        "times",
        lambda a, b, c: a * b,
        [
            "One ticket costs {a} dollars. How many dollars do {b} tickets cost?",
            "If a ticket costs {a} dollars, what is the price of {b} tickets in dollars?",
            "How many dollars must you pay for {b} tickets at {a} dollars each?",
            "Tickets are {a} dollars each. What do {b} tickets cost, in dollars?",
        ],
    ),
    (
        "two-step",
        lambda a, b, c: a * b - c,
        [
            "Lena buys {a} packs of stickers with {b} stickers in each pack. She gives away {c} stickers. "
            "How many stickers does she have left?",
            "Lena gets {a} packs holding {b} stickers each and then gives {c} stickers away. How many stickers remain?",
            "If Lena buys {a} packs of {b} stickers and gives away {c} of them, how many stickers does she keep?",
            "After buying {a} sticker packs with {b} stickers per pack and giving away {c} stickers, "
            "how many stickers does Lena have?",
        ],
    ),
    (
        "two-step",
        lambda a, b, c: a - b * c,
        [
            "A book has {a} pages. Tom reads {b} pages a day for {c} days. How many pages does he still have to read?",
            "Tom reads {b} pages of a {a}-page book every day for {c} days. How many pages are left to read?",
            "If a book is {a} pages long and Tom reads {b} pages daily for {c} days, how many pages remain unread?",
            "After reading {b} pages a day for {c} days, how many pages of his {a}-page book does Tom have left?",
        ],
    ),
]

CONVERSIONS = [
    # (from unit, to unit, factor)
    ("meters", "centimeters", 100),
    ("kilometers", "meters", 1000),
    ("kilograms", "grams", 1000),
    ("liters", "milliliters", 1000),
    ("hours", "minutes", 60),
    ("minutes", "seconds", 60),
    ("days", "hours", 24),
    ("weeks", "days", 7),
    ("feet", "inches", 12),
    ("yards", "feet", 3),
    ("centimeters", "millimeters", 10),
    ("dozen", "items", 12),
]
CONVERSION_TEMPLATES = [
    "How many {to} are in {a} {frm}?",
    "Convert {a} {frm} to {to}.",
    "{a} {frm} is equal to how many {to}?",
    "What is {a} {frm} expressed in {to}?",
    "If you have {a} {frm}, how many {to} is that?",
]
DOZEN_TEMPLATES = [
    "How many eggs are in {a} dozen eggs?",
    "If you buy {a} dozen eggs, how many eggs do you have?",
    "{a} dozen eggs is how many eggs?",
    "How many eggs make up {a} dozen?",
]


def arithmetic_items(rng: random.Random) -> list[dict]:
    items = []
    for op, (fn, templates) in OPERATIONS.items():
        for index in range(8):
            if op == "plus":
                a, b = rng.randint(2, 60), rng.randint(2, 40)
            elif op == "minus":
                a = rng.randint(10, 90)
                b = rng.randint(1, a - 1)
            elif op == "times":
                a, b = rng.randint(2, 12), rng.randint(2, 12)
            else:
                b = rng.randint(2, 10)
                a = b * rng.randint(2, 12)
            value = fn(a, b)
            assert value > 0 and (op != "divided" or a % b == 0)
            pick = [templates[(index + j) % (len(templates) - 1) + 1] for j in range(3)]
            variants = [t.format(a=a, b=b) for t in [templates[0], *pick]]
            items.append(_item("arithmetic", "math", [str(value)], variants, {"operation": op, "a": a, "b": b}))
    for op, fn, templates in WORD_PROBLEMS:
        for _ in range(3):
            if op == "plus":
                a, b, c = rng.randint(3, 40), rng.randint(2, 30), 0
            elif op == "minus":
                a = rng.randint(12, 60)
                b, c = rng.randint(2, a - 2), 0
            elif op == "times":
                a, b, c = rng.randint(3, 15), rng.randint(2, 9), 0
            elif op == "divided":
                b = rng.randint(2, 8)
                a, c = b * rng.randint(2, 9), 0
            elif "pages" in templates[0]:
                b, c = rng.randint(5, 20), rng.randint(2, 5)
                a = b * c + rng.randint(10, 120)
            else:
                a, b = rng.randint(2, 6), rng.randint(4, 10)
                c = rng.randint(1, min(9, a * b - 1))
            value = fn(a, b, c)
            assert value > 0, (templates[0], a, b, c)
            variants = [t.format(a=a, b=b, c=c) for t in templates]
            items.append(
                _item(
                    "word problems", "math", number_aliases(value), variants, {"operation": op, "a": a, "b": b, "c": c}
                )
            )
    return items


def conversion_items(rng: random.Random) -> list[dict]:
    items = []
    for index, (frm, to, factor) in enumerate(CONVERSIONS):
        for j in range(2 if frm != "dozen" else 3):
            a = rng.randint(2, 9) if factor >= 100 else rng.randint(2, 15)
            value = a * factor
            if frm == "dozen":
                variants = [t.format(a=a) for t in DOZEN_TEMPLATES]
            else:
                pick = [CONVERSION_TEMPLATES[(index + j + k) % 4 + 1] for k in range(3)]
                variants = [t.format(a=a, frm=frm, to=to) for t in [CONVERSION_TEMPLATES[0], *pick]]
                variants = [v[0].upper() + v[1:] for v in variants]
            items.append(
                _item(
                    "unit conversions",
                    "math",
                    number_aliases(value),
                    variants,
                    {"from": frm, "to": to, "amount": a, "factor": factor},
                )
            )
    return items


# ----------------------------------------------------------------------------------------


def _item(category: str, kind: str, gold: list[str], variants: list[str], meta: dict | None = None) -> dict:
    assert len(variants) == 4 and len(set(variants)) == 4, variants
    return {
        "category": category,
        "kind": kind,
        "gold": gold,
        "variants": [{"id": i, "question": q} for i, q in enumerate(variants)],
        "meta": meta or {},
    }


def build() -> list[dict]:
    """All items, with stable ids `<category>-<nnn>`."""
    rng = random.Random(SEED)
    items = capital_items()
    for category, table in (("geography", GEOGRAPHY), ("science", SCIENCE), ("history", HISTORY), ("people", PEOPLE)):
        items += [_item(category, "factual", gold, list(qs)) for gold, *qs in table]
    items += [_item("how many", "factual", number_aliases(n), list(qs)) for n, *qs in COUNTS]
    items += arithmetic_items(rng)
    items += conversion_items(rng)
    counters: dict[str, int] = {}
    out = []
    seen_questions: set[str] = set()
    for item in items:
        slug = item["category"].replace(" ", "-")
        counters[slug] = counters.get(slug, 0) + 1
        original = item["variants"][0]["question"]
        assert original not in seen_questions, original
        seen_questions.add(original)
        out.append({"id": f"{slug}-{counters[slug]:03d}", **item})
    return out


def render(items: list[dict]) -> str:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)


def main(argv: list[str]) -> int:
    text = render(build())
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is out of date: run python scripts/make_sample.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {len(text.splitlines())} items to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
